// Inside a test file, require() runs through Jest's own module loader (which cannot load ES modules):
// the package must load there too, not only in globalSetup.
const sandbox = require('billing-sandbox');
const client = require('billing-sandbox/client');
const apiChecks = require('../shared/api-checks.cjs');

apiChecks(sandbox, client, { test, expect }, 'cjs');
