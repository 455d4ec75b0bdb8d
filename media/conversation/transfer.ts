import type { AgentSettings, AgentTransfer, TransferDestination } from '../../db/models/agent';
import type { LlmTool } from '../../providers/llm/types';

/**
 * The built-in `transfer_call` tool (docs/decisions/0160): what the model is offered, and how
 * its arguments are read. ./transfer-call.ts runs it: the handover message, then the
 * call's workflow transfers the call through the provider (the conversation's `transfer` dep).
 */

export const TRANSFER_TOOL_NAME = 'transfer_call';

/** `call.transfer`, with what agents saved before transfers existed read as (no destinations). */
export function transferSettingsOf(call: AgentSettings['call']): AgentTransfer {
  const transfer = (call as Partial<AgentSettings['call']>).transfer;
  return {
    destinations: transfer?.destinations ?? [],
    handover_message: transfer?.handover_message ?? '',
    ring_timeout_seconds: transfer?.ring_timeout_seconds ?? 30,
  };
}

/** The tool the model is offered when the agent has destinations; null otherwise. */
export function transferTool(transfer: AgentTransfer): LlmTool | null {
  if (!transfer.destinations.length) return null;
  const list = transfer.destinations.map((d) => `${d.number}: ${d.description}`).join('\n');
  return {
    name: TRANSFER_TOOL_NAME,
    description: `Transfer the caller to a person at one of these numbers, when the caller asks for a person or their request needs one:\n${list}`,
    parameters: {
      type: 'object',
      properties: {
        destination: { type: 'string', enum: transfer.destinations.map((d) => d.number), description: 'The number to transfer to.' },
        reason: { type: 'string', description: 'Why the caller is transferred, in a few words.' },
      },
      required: ['destination', 'reason'],
      additionalProperties: false,
    },
  };
}

/** The destination and reason of a `transfer_call`, or what is wrong with its arguments (told to the model). */
export function transferOf(args: Record<string, unknown>, transfer: AgentTransfer): { destination: TransferDestination; reason: string } | { problem: string } {
  const number = typeof args.destination === 'string' ? args.destination.trim() : '';
  const destination = transfer.destinations.find((d) => d.number === number);
  if (!destination) return { problem: `not transferred: destination must be one of ${transfer.destinations.map((d) => d.number).join(', ')}` };
  return { destination, reason: typeof args.reason === 'string' ? args.reason.slice(0, 500) : '' };
}
