// Owns the TypeScript names of the document's schemas: types are generated from
// openapi/openapi.yaml (npm run gen) and never written twice.
import type { components } from './generated/api.js';

export type Schemas = components['schemas'];
export type Schema<Name extends keyof Schemas> = Schemas[Name];
