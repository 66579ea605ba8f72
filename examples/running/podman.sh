podman build -t billing-sandbox .                                    # as docker build
podman run --runtime runc --rm -p 4010:4010 billing-sandbox          # runc where the default runtime (crun) cannot run here
# "error setting rlimits": podman asks the runtime for 1048576 open files and processes, which a host
# without CAP_SYS_RESOURCE (a container, a CI sandbox) refuses; ask for what this shell has instead:
podman run --runtime runc --ulimit nofile=$(ulimit -Sn):$(ulimit -Hn) --ulimit nproc=4096:4096 \
  --rm -p 4010:4010 billing-sandbox
# Testcontainers, the docker CLI and Compose through podman's Docker-compatible API (containers.conf below):
CONTAINERS_CONF=$PWD/containers.conf podman system service --time=0 unix:///run/podman/podman.sock &
export DOCKER_HOST=unix:///run/podman/podman.sock TESTCONTAINERS_RYUK_DISABLED=true
