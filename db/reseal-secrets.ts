import type { Collection } from 'mongoose';
import { Agent, type StoredAgentTool } from './models/agent';
import { AgentVersion } from './models/agent-version';
import { User } from './models/user';
import { WebhookDefaultSecret } from './models/webhook-default-secret';
import { WebhookEndpoint } from './models/webhook-endpoint';
import { needsReseal, open, seal, type DataKeyRing } from '../contracts/secret-box';

/** How many documents each collection had written again. */
export interface ResealCounts {
  agents: number;
  agent_versions: number;
  webhook_endpoints: number;
  webhook_default_secrets: number;
  users: number;
}

/**
 * `npm run keys:rotate` (docs/decisions/0196): every stored secret not under the ring's
 * current key, plaintext ones stored before encryption included, is opened and sealed again
 * under the current key with a fresh data key. Afterwards no stored value needs an older key,
 * which may then leave DATA_KEYS. Running it again writes nothing. Each write is guarded by
 * the value it replaces (an agent by its version), so a concurrent change wins over it.
 */
export async function resealStoredSecrets(ring: DataKeyRing): Promise<ResealCounts> {
  const reseal = (stored: string) => (needsReseal(ring, stored) ? seal(ring, open(ring, stored)) : stored);
  return {
    agents: await resealAgents(ring, reseal),
    agent_versions: await resealVersions(ring, reseal),
    webhook_endpoints: await resealField(WebhookEndpoint.collection, 'secret', ring, reseal),
    webhook_default_secrets: await resealField(WebhookDefaultSecret.collection, 'secret', ring, reseal),
    users:
      (await resealField(User.collection, 'two_factor.secret', ring, reseal)) + (await resealField(User.collection, 'two_factor.pending_secret', ring, reseal)),
  };
}

type Reseal = (stored: string) => string;

/** The tools with every header value under the current key; null when none needed it. */
function resealedTools(tools: StoredAgentTool[] | undefined, ring: DataKeyRing, reseal: Reseal): StoredAgentTool[] | null {
  let changed = false;
  const next = (tools ?? []).map((tool) => {
    const headers = JSON.parse(tool.headers_json) as Record<string, string>;
    if (!Object.values(headers).some((value) => needsReseal(ring, value))) return tool;
    changed = true;
    return { ...tool, headers_json: JSON.stringify(Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, reseal(value)]))) };
  });
  return changed ? next : null;
}

async function resealAgents(ring: DataKeyRing, reseal: Reseal): Promise<number> {
  let written = 0;
  for await (const agent of Agent.find({}, { tools: 1, version: 1 }).lean<{ _id: string; tools: StoredAgentTool[]; version: number }[]>().cursor()) {
    const tools = resealedTools(agent.tools, ring, reseal);
    if (!tools) continue;
    const { modifiedCount } = await Agent.updateOne({ _id: agent._id, version: agent.version }, { $set: { tools } });
    written += modifiedCount;
  }
  return written;
}

async function resealVersions(ring: DataKeyRing, reseal: Reseal): Promise<number> {
  let written = 0;
  // A version never changes once saved, so no guard is needed beyond its id.
  for await (const version of AgentVersion.find({}, { 'settings.tools': 1 }).lean<{ _id: string; settings: { tools: StoredAgentTool[] } }[]>().cursor()) {
    const tools = resealedTools(version.settings?.tools, ring, reseal);
    if (!tools) continue;
    written += (await AgentVersion.updateOne({ _id: version._id }, { $set: { 'settings.tools': tools } })).modifiedCount;
  }
  return written;
}

/** One string field (dotted path) of every document of the collection (driver level: the field is all it touches). */
async function resealField(collection: Collection, field: string, ring: DataKeyRing, reseal: Reseal): Promise<number> {
  let written = 0;
  for await (const doc of collection.find({ [field]: { $type: 'string' } }, { projection: { [field]: 1 } })) {
    const stored = field.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], doc);
    if (typeof stored !== 'string' || !needsReseal(ring, stored)) continue;
    written += (await collection.updateOne({ _id: doc._id, [field]: stored }, { $set: { [field]: reseal(stored) } })).modifiedCount;
  }
  return written;
}
