// Operations that declare no parameters and no request body are checked without a compiled validator
// (src/http/openapi.ts, noInputCheck in the backends' validator): they must answer exactly what
// openapi-backend's own compiled validators answer, for requests with and without query parameters.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { OpenAPIValidator } from 'openapi-backend';
import { createBackend, validationErrors, type DocumentName } from '../src/http/openapi.js';
import { setup, type TestSandbox } from './helpers.js';

let sb: TestSandbox;

beforeEach(async () => {
  sb = await setup();
});

/**
 * What openapi-backend's own validators for the operation say of these query parameters: its
 * OpenAPIValidator's build of them (the method the sandbox's validator overrides), with the sandbox's
 * Ajvs and options.
 */
function compiledAnswer(document: DocumentName, operationId: string, query: Record<string, unknown>): Record<string, string> {
  const { validator } = createBackend(document);
  const operation = validator.router.getOperation(operationId)!;
  const validators = OpenAPIValidator.prototype.buildRequestValidatorsForOperation.call(validator, operation) ?? [];
  // Compiled by Ajv (a compiled validator carries its schema), unlike the sandbox's written-out check.
  expect(validators.map((validate) => typeof validate.schema)).toEqual(['object']);
  expect(validator.getRequestValidatorsForOperation(operationId)?.map((validate) => validate.schema)).toEqual([undefined]);
  const errors = validators.flatMap((validate) => (validate({ path: {}, query, header: { host: 'x' }, cookie: {} }) ? [] : validate.errors ?? []));
  return validationErrors(errors);
}

describe('operations that take no input', () => {
  it('GET /_sandbox/health answers what the compiled validator answers: 200 bare, 400 naming each query parameter', async () => {
    const bare = await sb.http.get('/_sandbox/health').expect(200);
    expect(bare.body.status).toBe('ok');
    expect(compiledAnswer('control-plane', 'sandboxHealth', {})).toEqual({});

    const refused = await sb.http.get('/_sandbox/health?verbose=1&probe=a&probe=b').expect(400);
    expect(refused.body.code).toBe('bad_request');
    const expected = compiledAnswer('control-plane', 'sandboxHealth', { verbose: '1', probe: ['a', 'b'] });
    expect(Object.keys(expected).sort()).toEqual(['probe', 'verbose']);
    expect(refused.body.validation_errors).toEqual(expected);
  });

  it('POST /webhooks/retry (no parameters, no body) refuses a query parameter as the compiled validator does', async () => {
    const token = await sb.token();
    const refused = await sb.http.post('/webhooks/retry?force=true').set('Authorization', `Bearer ${token}`).expect(400);
    expect(refused.body.validation_errors).toEqual(compiledAnswer('openapi', 'retryWebhooks', { force: 'true' }));
    // Security still comes first: without a token it is 401, not 400.
    expect((await sb.http.post('/webhooks/retry?force=true')).status).toBe(401);
    // Without the parameter the same call goes through to the handler.
    const accepted = await sb.http.post('/webhooks/retry').set('Authorization', `Bearer ${token}`);
    expect(accepted.status).toBeLessThan(300);
  });
});
