/**
 * The authorizer an AuthorizationPlan calls for (kubernetes
 * pkg/kubeapiserver/authorizer reload.go newForConfig): system:masters first
 * (upstream's privileged group authorizer), then each configured authorizer
 * in order, in a union where the first allow or deny wins.
 *
 * AlwaysAllow allows; AlwaysDeny has no opinion ("Everything is forbidden.",
 * so that a later authorizer may still allow, as upstream); RBAC and Node
 * follow their objects through store subscriptions, which `unsubscribe`
 * ends; ABAC reads its policy file once; each Webhook gets its client from
 * its kubeconfig file or the in-cluster service account.
 */
import { readFileSync } from 'node:fs';
import type { Store } from '../registry/store.js';
import { AbacAuthorizer } from './abac.js';
import type { AuthorizationPlan, WebhookSettings } from './authz-config.js';
import { bootstrapPolicy } from './bootstrap.js';
import { NodeAuthorizer } from './node.js';
import { MastersAuthorizer, RbacAuthorizer, UnionAuthorizer, type PolicyRule } from './rbac.js';
import type { Attributes, Authorizer, Decision, RuleSet, UserInfo } from './types.js';
import { WebhookAuthorizer } from './webhook-authz.js';
import { type WebhookClient, webhookClient, webhookFromKubeconfig } from './webhook-client.js';

const EVERYTHING: RuleSet = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false,
};

export const alwaysAllow: Authorizer = {
  authorize: (): Decision => ({ allowed: true, reason: '' }),
  resolveRules: (): RuleSet => structuredClone(EVERYTHING),
};

export const alwaysDeny: Authorizer = {
  authorize: (): Decision => ({ allowed: false, reason: 'Everything is forbidden.' }),
  resolveRules: (): RuleSet => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** rest.InClusterConfig: the service host and port from the environment, this pod's token and CA. */
function inClusterClient(timeoutMs: number): WebhookClient {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return webhookClient(
    {
      server,
      namespace: 'default',
      insecureSkipTLSVerify: false,
      token: readFileSync(`${SA_DIR}/token`, 'utf8').trim(),
      ca: readFileSync(`${SA_DIR}/ca.crt`),
    },
    timeoutMs,
  );
}

export type WebhookClientFactory = (w: WebhookSettings) => WebhookClient;

const defaultClients: WebhookClientFactory = (w) =>
  w.connectionInfo.type === 'KubeConfigFile' ? webhookFromKubeconfig(w.connectionInfo.kubeConfigFile, w.timeoutMs) : inClusterClient(w.timeoutMs);

/** The Node authorizer lists no rules for nodes (their access follows their pods). */
function nodeResolver(nodes: NodeAuthorizer): Authorizer {
  return {
    authorize: (a: Attributes) => nodes.authorize(a),
    resolveRules: (user: UserInfo): RuleSet =>
      user.name.startsWith('system:node:') && user.groups.includes('system:nodes')
        ? { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'node authorizer does not support user rule resolution' }
        : { resourceRules: [], nonResourceRules: [], incomplete: false },
  };
}

export interface BuiltAuthorizer {
  authorizer: Authorizer;
  /** The RBAC authorizer, when RBAC is among the authorizers. */
  rbac?: RbacAuthorizer;
  unsubscribe: (() => void)[];
}

/** Builds the union; throws when a policy file or kubeconfig cannot be read. */
export function buildAuthorizer(
  registry: ReadonlyMap<string, Store>,
  plan: AuthorizationPlan,
  o: { webhookClient?: WebhookClientFactory } = {},
): BuiltAuthorizer {
  const unsubscribe: (() => void)[] = [];
  const list: Authorizer[] = [new MastersAuthorizer()];
  let rbac: RbacAuthorizer | undefined;
  try {
    for (const c of plan.authorizers) {
      switch (c.type) {
        case 'AlwaysAllow':
          list.push(alwaysAllow);
          break;
        case 'AlwaysDeny':
          list.push(alwaysDeny);
          break;
        case 'ABAC':
          if (!plan.policyFile) throw new Error("authorization-mode ABAC's authorization policy file not passed");
          list.push(AbacAuthorizer.fromFile(plan.policyFile));
          break;
        case 'RBAC': {
          const r = new RbacAuthorizer();
          for (const kind of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const)
            unsubscribe.push(registry.get(`rbac.authorization.k8s.io/v1/${kind}`)!.subscribe((type, obj) => r.apply(kind, type, obj)));
          rbac ??= r;
          list.push(r);
          break;
        }
        case 'Node': {
          const nodeRules = (bootstrapPolicy().clusterRoles.find((x) => x.metadata.name === 'system:node') as unknown as { rules: PolicyRule[] }).rules;
          const nodes = new NodeAuthorizer(nodeRules);
          // The graph: pods, volumes and attachments.
          unsubscribe.push(...nodes.follow(registry));
          list.push(nodeResolver(nodes));
          break;
        }
        case 'Webhook': {
          const w = c.webhook!;
          list.push(
            new WebhookAuthorizer({
              name: c.name,
              client: (o.webhookClient ?? defaultClients)(w),
              version: w.subjectAccessReviewVersion,
              authorizedTTLMs: w.authorizedTTLMs,
              unauthorizedTTLMs: w.unauthorizedTTLMs,
              failurePolicy: w.failurePolicy,
              matchConditions: w.matchConditions,
            }),
          );
          break;
        }
        default:
          throw new Error(`unknown authorization mode ${c.type} specified`);
      }
    }
  } catch (e) {
    for (const u of unsubscribe) u();
    throw e;
  }
  return { authorizer: new UnionAuthorizer(list), ...(rbac ? { rbac } : {}), unsubscribe };
}
