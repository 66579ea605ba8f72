docker build -t billing-sandbox .                        # from a clone of this repository
docker run --rm -p 4010:4010 billing-sandbox             # http://127.0.0.1:4010
docker run --rm -p 4010:4010 billing-sandbox --seed 42 --fixtures demo --scenario slow-api   # flags after the image
docker run --rm -p 4010:4010 -e SANDBOX_RATE_LIMIT=0 -e SANDBOX_SEED=42 billing-sandbox      # or the variables
