/**
 * The in-cluster PostgreSQL as the policy sees it: a CloudNativePG Cluster, whose pods and Services
 * are the operator's doing and never rendered, and its Database objects. What the rules need of
 * them: the instances' labels and ports, the roles and databases a Cluster creates, the Secrets
 * its roles read, and whether a database URL written in the manifests reaches it as it must.
 */
import type { JsonObject, K8sObject } from './kustomize';

/** The CloudNativePG operator's API. */
const CNPG = 'postgresql.cnpg.io/v1';
/** The kinds as a rule selects them (apiVersion/kind: another API may have a Cluster too). */
export const CLUSTER = `${CNPG}/Cluster`;
export const DATABASE = `${CNPG}/Database`;

export const isCluster = (o: K8sObject) => o.apiVersion === CNPG && o.kind === 'Cluster';
const isDatabase = (o: K8sObject) => o.apiVersion === CNPG && o.kind === 'Database';
const ns = (o: K8sObject) => o.metadata.namespace ?? '';
const spec = (o: K8sObject) => (o['spec'] ?? {}) as JsonObject;
const initdb = (cluster: K8sObject) => ((spec(cluster)['bootstrap'] as JsonObject | undefined)?.['initdb'] as JsonObject | undefined) ?? {};
const managedRoles = (cluster: K8sObject) =>
  ((spec(cluster)['managed'] as JsonObject | undefined)?.['roles'] as JsonObject[] | undefined) ?? [];

/** The labels the operator gives a Cluster's instance pods (with the Cluster's inheritedMetadata labels). */
export function clusterPodLabels(cluster: K8sObject): Record<string, string> {
  const inherited = (spec(cluster)['inheritedMetadata'] as JsonObject | undefined)?.['labels'] as Record<string, string> | undefined;
  return { ...inherited, 'cnpg.io/cluster': cluster.metadata.name, 'cnpg.io/podRole': 'instance' };
}

/** An instance pod's container ports: PostgreSQL, the metrics exporter, the instance manager's status (which the operator polls). */
export const CLUSTER_POD_PORTS = [
  { name: 'postgresql', containerPort: 5432 },
  { name: 'metrics', containerPort: 9187 },
  { name: 'status', containerPort: 8000 },
];

/** The roles a Cluster creates: its managed roles (not ensured absent) and the owner of the database initdb creates. */
export function clusterRoles(cluster: K8sObject): string[] {
  const managed = managedRoles(cluster)
    .filter((r) => r['ensure'] !== 'absent')
    .map((r) => String(r['name']));
  const owner = (initdb(cluster)['owner'] as string | undefined) ?? 'app';
  return [...new Set([...managed, owner])];
}

/** The Secrets a Cluster's roles read their credentials from (kubernetes.io/basic-auth: username and password). */
export function roleSecretNames(cluster: K8sObject): string[] {
  const names = [
    ...managedRoles(cluster).map((r) => (r['passwordSecret'] as JsonObject | undefined)?.['name']),
    (initdb(cluster)['secret'] as JsonObject | undefined)?.['name'],
  ];
  return [...new Set(names.filter((name): name is string => typeof name === 'string'))];
}

/** The databases a Cluster has: the one initdb creates, and each Database object of it not ensured absent. */
function clusterDatabases(cluster: K8sObject, objects: K8sObject[]): string[] {
  const own = objects.filter(
    (d) =>
      isDatabase(d) &&
      ns(d) === ns(cluster) &&
      (spec(d)['cluster'] as JsonObject)['name'] === cluster.metadata.name &&
      spec(d)['ensure'] !== 'absent',
  );
  return [(initdb(cluster)['database'] as string | undefined) ?? 'app', ...own.map((d) => String(spec(d)['name']))];
}

/** The Cluster a Database object names, in its namespace. */
export const databaseCluster = (database: K8sObject, objects: K8sObject[]) =>
  objects.find(
    (x) => isCluster(x) && x.metadata.name === String((spec(database)['cluster'] as JsonObject)['name']) && ns(x) === ns(database),
  );

/** How many instances a Cluster runs (one unless it says). */
export const instances = (cluster: K8sObject) => Number(spec(cluster)['instances'] ?? 1);

/** Its synchronous replication stanza, if any. */
export const synchronous = (cluster: K8sObject) =>
  (spec(cluster)['postgresql'] as JsonObject | undefined)?.['synchronous'] as JsonObject | undefined;

/**
 * Why a database URL written in the manifests is wrong, if it is: it must reach a Cluster of its
 * namespace through the read-write Service (`<cluster>-rw`, the primary, whichever instance that
 * is after a failover), as a role the Cluster creates, into a database it has. An external
 * server's URL belongs in the service's Secret instead.
 */
export function databaseUrlProblem(value: string, objects: K8sObject[], namespace: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.replace(/\$\([A-Za-z0-9_]+\)/g, 'x'));
  } catch {
    return 'not a URL';
  }
  // Short names and names qualified by the namespace reach the same Service.
  const host = url.hostname.replace(new RegExp(`\\.${namespace}(\\.svc(\\.cluster\\.local)?)?$`), '');
  const cluster = objects.find(
    (c) => isCluster(c) && ns(c) === namespace && ['-rw', '-ro', '-r'].some((suffix) => host === c.metadata.name + suffix),
  );
  if (!cluster)
    return `connects to ${host}, which is no PostgreSQL Cluster's read-write Service (<cluster>-rw); an external server's URL belongs in the service's Secret`;
  const name = cluster.metadata.name;
  if (host !== `${name}-rw`) return `connects to ${host}, a Service of Cluster ${name}'s standbys, where writes fail: use ${name}-rw`;
  const user = decodeURIComponent(url.username);
  if (!clusterRoles(cluster).includes(user)) return `connects as ${user || '(no user)'}, which is no role of Cluster ${name}`;
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!clusterDatabases(cluster, objects).includes(database))
    return `names database ${database || '(none)'}, which Cluster ${name} does not create (a Database object)`;
  return undefined;
}
