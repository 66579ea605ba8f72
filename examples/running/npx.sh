npx billing-sandbox --port 4010 --seed 42                 # once the package is in your registry
npm pack                                                 # or from a clone: billing-sandbox-0.1.0.tgz (the build runs first)
npx --package ./billing-sandbox-0.1.0.tgz billing-sandbox --port 4010
