import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';

/**
 * The client's types (`src/schema.d.ts`) from the OpenAPI document, with openapi-typescript.
 * Used by `npm run openapi` (writes the file) and by the drift test (compares it).
 */
export async function generateSchemaTypes(document: object): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, { alphabetize: false });
  return `/**\n * Generated from openapi.json by \`npm run openapi\` (openapi-typescript). Do not edit by hand.\n */\n\n${astToString(ast)}`;
}
