// Inside a test file, imports run through Jest's own module loader (ES modules in Jest's VM), and a
// CommonJS dependency that require()s an ES module fails there: the package must load in a test file too.
import * as sandbox from 'billing-sandbox';
import * as client from 'billing-sandbox/client';
import apiChecks from '../shared/api-checks.cjs';

apiChecks(sandbox, client, { test, expect }, 'esm');
