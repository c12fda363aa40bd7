import path from 'node:path';
import { loadOpenApiDocument } from '../reference/reference-router';
import { findRepoRoot } from '../repo-root';

/** The admin API's OpenAPI document (`openapi/admin.yaml`), served at `GET /admin/openapi.json`. */
export const loadAdminDocument = (): Record<string, unknown> => loadOpenApiDocument(path.join(findRepoRoot(), 'openapi', 'admin.yaml'));
