// Owns the one import of ajv-formats, so the documents' validators (requests, answers, fixtures,
// parity shapes) all add the same formats through one typed function.
import type { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import is typed as the module's namespace,
// but at run time it is module.exports, which is the plugin function itself.
export const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
