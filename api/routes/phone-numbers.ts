import { Router, type Request, type Response } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { Agent } from '../../db/models/agent';
import {
  NumberNotInPoolError,
  NumberNotInWorkspaceError,
  NumberTakenError,
  assignNumberToAgent,
  claimNumber,
  heldNumbers,
  numberOfWorkspace,
  numbersOfWorkspace,
  releaseNumber,
  repairAgentNumbers,
  type ClaimedNumber,
} from '../../domain/numbers/phone-numbers';
import { MAX_PAGE_SIZE, type NumberPage, type ProviderNumber, type Telephony } from '../../providers/telephony/types';
import { actorOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import { fromProvider } from '../../domain/shared/provider-errors';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type PhoneNumberView = operations['listPhoneNumbers']['responses']['200']['content']['application/json'][number];
type AvailableView = operations['listAvailablePhoneNumbers']['responses']['200']['content']['application/json'][number];
type Claim = operations['claimPhoneNumber']['requestBody']['content']['application/json'];
type Connection = operations['connectPhoneNumber']['requestBody']['content']['application/json'];

/** Pages of the provider's pool read for one list of available numbers, at most (20 numbers each). */
const MAX_POOL_PAGES = 25;

/**
 * The workspace's numbers (taken from the telephony provider account's pool) and their
 * connections to agents. The number records are the truth; see domain/numbers/phone-numbers.ts.
 */
export function phoneNumberRoutes(deps: { telephony: Telephony }): Router {
  const router = apiRouter();

  router.get('/phone-numbers', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    await repairAgentNumbers(workspace.id);
    res.json(await views(workspace.id, await numbersOfWorkspace(workspace.id)));
  });

  router.get('/phone-numbers/available', async (req, res) => {
    const limit = Number(req.query.limit ?? 20);
    const startsWith = typeof req.query.starts_with === 'string' ? req.query.starts_with.replace(/^\+/, '') : undefined;
    const available: ProviderNumber[] = [];
    let offset: number | null = 0;
    for (let page = 0; page < MAX_POOL_PAGES && offset !== null && available.length < limit; page++) {
      const { numbers, nextOffset }: NumberPage = await fromProvider(deps.telephony.listNumbers({ startsWith, limit: MAX_PAGE_SIZE, offset }));
      const held = await heldNumbers(numbers.map((n) => n.number));
      available.push(...numbers.filter((n) => n.voiceEnabled && !held.has(n.number)));
      offset = nextOffset;
    }
    res.json(available.slice(0, limit).map((n) => ({ number: n.number, region: n.region, number_type: n.numberType }) satisfies AvailableView));
  });

  router.post('/phone-numbers', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { number } = req.body as Claim;
    const lookUp = async (wanted: string) => {
      const offered = await fromProvider(deps.telephony.getNumber(wanted));
      return offered?.voiceEnabled ? { region: offered.region, numberType: offered.numberType } : null;
    };
    let claimed: Awaited<ReturnType<typeof claimNumber>>;
    try {
      claimed = await claimNumber(workspace.id, { number, by: actorOf(res).name ?? 'unknown', at: new Date(), lookUp });
    } catch (err) {
      if (err instanceof NumberTakenError) throw new HttpError(409, `${number} is used by another workspace`);
      if (err instanceof NumberNotInPoolError) throw new HttpError(409, `${number} is not available; pick one from GET /phone-numbers/available`);
      throw err;
    }
    if (claimed.created) await audit(req, res, 'phone_number.claimed', claimed.record);
    res.status(claimed.created ? 201 : 200).json((await views(workspace.id, [claimed.record]))[0]);
  });

  router.delete('/phone-numbers/:number', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const record = await releaseNumber(workspace.id, req.params.number);
    if (!record) throw new HttpError(404, 'phone number not found');
    await audit(req, res, 'phone_number.released', record, { agent_id: record.agent_id });
    res.status(204).end();
  });

  router.put('/phone-numbers/:number/agent', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { agent_id: agentId } = req.body as Connection;
    const record = await numberOfWorkspace(workspace.id, req.params.number);
    if (!record) throw new HttpError(404, 'phone number not found');
    if (!(await Agent.exists({ _id: agentId, workspace_id: workspace.id }))) throw new HttpError(404, 'agent not found');
    try {
      await assignNumberToAgent(workspace.id, agentId, record.number);
    } catch (err) {
      if (err instanceof NumberNotInWorkspaceError) throw new HttpError(404, 'phone number not found'); // released meanwhile
      throw err;
    }
    await audit(req, res, 'phone_number.connected', record, { agent_id: agentId, previous_agent_id: record.agent_id });
    res.json(await viewOf(workspace.id, record.number));
  });

  router.delete('/phone-numbers/:number/agent', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const record = await numberOfWorkspace(workspace.id, req.params.number);
    if (!record) throw new HttpError(404, 'phone number not found');
    if (record.agent_id) {
      await assignNumberToAgent(workspace.id, record.agent_id, null);
      await audit(req, res, 'phone_number.disconnected', record, { agent_id: record.agent_id });
    }
    res.json(await viewOf(workspace.id, record.number));
  });

  return router;
}

async function viewOf(workspaceId: string, number: string) {
  const record = await numberOfWorkspace(workspaceId, number);
  if (!record) throw new HttpError(404, 'phone number not found');
  return (await views(workspaceId, [record]))[0];
}

/** Records as the API shows them, with the names of their agents. */
async function views(workspaceId: string, records: ClaimedNumber[]) {
  const agentIds = records.flatMap((r) => (r.agent_id ? [r.agent_id] : []));
  const agents = agentIds.length
    ? await Agent.find({ workspace_id: workspaceId, _id: { $in: agentIds } }, { name: 1 }).lean<{ _id: string; name: string }[]>()
    : [];
  const names = new Map(agents.map((a) => [a._id, a.name]));
  return records.map(
    (r) =>
      ({
        number: r.number,
        agent_id: r.agent_id,
        agent_name: r.agent_id ? (names.get(r.agent_id) ?? null) : null,
        region: r.region,
        number_type: r.number_type,
        claimed_at: r.claimed_at,
        claimed_by: r.claimed_by,
        connected_at: r.connected_at,
      }) satisfies Record<keyof PhoneNumberView, unknown>,
  );
}

async function audit(req: Request, res: Response, action: string, record: ClaimedNumber, details: Record<string, unknown> = {}) {
  await recordWorkspaceAudit(record.workspace_id, {
    action,
    actor: actorOf(res),
    target: { type: 'phone_number', id: record._id, name: record.number },
    at: new Date(),
    ip: clientIp(req),
    details,
  });
}
