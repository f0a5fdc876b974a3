/**
 * Writes tools/deploy/crds/cloudnative-pg.yaml: the OpenAPI schemas of the CloudNativePG custom
 * resources the overlays use (Cluster, Database), taken from the operator's release manifest, the
 * very schemas its CRDs install. Descriptions are dropped (the validator needs the structure only).
 * Run it again when the operator the deployment asks for changes (deploy/README.md, "Install"):
 *
 *   curl -sSfLo /tmp/cnpg.yaml https://raw.githubusercontent.com/cloudnative-pg/cloudnative-pg/release-1.30/releases/cnpg-1.30.0.yaml
 *   npx tsx tools/deploy/crd-schemas.ts /tmp/cnpg.yaml
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { CRD_SCHEMAS_FILE, type CrdSchemas } from './schemas';

/** The kinds taken, by CRD name. */
const WANTED = ['clusters.postgresql.cnpg.io', 'databases.postgresql.cnpg.io'];

interface Crd {
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string };
    versions: Array<{ name: string; served: boolean; schema: { openAPIV3Schema: unknown } }>;
  };
}

const withoutDescriptions = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutDescriptions)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([key]) => key !== 'description')
            .map(([key, v]) => [key, withoutDescriptions(v)]),
        )
      : value;

function main(): void {
  const manifest = process.argv[2];
  if (!manifest) {
    console.error('usage: npx tsx tools/deploy/crd-schemas.ts <the operator release manifest, e.g. cnpg-1.30.0.yaml>');
    process.exit(2);
  }
  const crds = parseAllDocuments(readFileSync(manifest, 'utf8'))
    .map((d) => d.toJS() as Crd | null)
    .filter((d): d is Crd => d?.kind === 'CustomResourceDefinition' && WANTED.includes(d.metadata.name));
  const missing = WANTED.filter((name) => !crds.some((c) => c.metadata.name === name));
  if (missing.length) {
    console.error(`${manifest} has no CustomResourceDefinition ${missing.join(', ')}`);
    process.exit(1);
  }
  const out: CrdSchemas = { source: basename(manifest), schemas: {} };
  for (const crd of crds)
    for (const version of crd.spec.versions.filter((v) => v.served))
      out.schemas[`${crd.spec.group}/${version.name}/${crd.spec.names.kind}`] = withoutDescriptions(
        version.schema.openAPIV3Schema,
      ) as object;
  writeFileSync(
    CRD_SCHEMAS_FILE,
    `# Written by tools/deploy/crd-schemas.ts from ${out.source}; do not edit by hand.\n${stringify(out, { lineWidth: 0 })}`,
  );
  console.log(`${CRD_SCHEMAS_FILE}: ${Object.keys(out.schemas).join(', ')}`);
}

main();
