git clone <this repository> billing-sandbox && cd billing-sandbox
npm ci && npm pack                                   # billing-sandbox-0.1.0.tgz (the build runs first)
docker build -t billing-sandbox .                    # the image, billing-sandbox:latest (or podman build, below)
cd ../your-project
npm i -D ../billing-sandbox/billing-sandbox-0.1.0.tgz     # then: import { startSandbox } from 'billing-sandbox'
npm i -D testcontainers                              # only for billing-sandbox/testcontainers
