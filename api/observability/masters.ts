import { AGENT_STATUSES, EXTRACTION_TYPES, TOOL_METHODS, TURN_DETECTION_MODES, agentDefaults } from '../../domain/agents/catalog';
import { CALL_DIRECTIONS, CALL_STATUSES, FINAL_CALL_STATUSES, LIVE_CALL_STATUSES } from '../../db/models/call';
import { BATCH_STATUSES, CONTACT_STATUSES } from '../../db/models/batch';
import { LEDGER_KINDS } from '../../db/models/ledger-item';
import { DELIVERY_STATUSES } from '../../db/models/webhook-delivery';
import { WORKSPACE_STATUSES } from '../../db/models/workspace';
import { DEFAULT_PLAN, PLANS } from '../../domain/billing/plans';
import { EVENT_TYPES } from '../../domain/webhooks/event-types';
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES } from '../../domain/accounts/permissions';
import { planFields } from '../../domain/billing/views';
import { formatInZone, listedTimeZones } from '../../domain/shared/time';
import { LOG_SOURCES } from './log-sources';
import { LOG_CREDENTIAL_KINDS } from '../../db/models/server-log';

/**
 * Languages the console offers for an agent's voice and speech recognition: India's most
 * spoken languages and English. Agents accept any BCP 47 tag; this is the pick list. Names
 * come from the runtime's own language data, so there is no second table to keep.
 */
export const CONSOLE_LANGUAGES = ['hi', 'en-IN', 'en', 'bn', 'ta', 'te', 'mr', 'gu', 'kn', 'ml', 'pa', 'or', 'as', 'ur'] as const;

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

/**
 * The lists the console fills its menus from, each read from the code that enforces it (the
 * permission table, the plans, the event types, the call and delivery states, the catalog's
 * agent options), so a list here can never disagree with what the API accepts.
 * `utc_offset` is the zone's offset at `now` (it moves with daylight saving).
 */
export function mastersOf(now: Date) {
  const defaults = agentDefaults();
  return {
    languages: CONSOLE_LANGUAGES.map((code) => ({ code, name: languageNames.of(code) ?? code })),
    default_language: defaults.voice.language,
    timezones: listedTimeZones().map((id) => ({ id, utc_offset: formatInZone(now, id).slice(-6) })),
    default_timezone: defaults.call.timezone,
    roles: ROLES.map((role) => ({ id: role, permissions: PERMISSIONS.filter((p) => ROLE_PERMISSIONS[role].has(p)) })),
    permissions: [...PERMISSIONS],
    event_types: EVENT_TYPES.map((e) => ({ type: e.type, description: e.description })),
    plans: Object.values(PLANS).map((plan) => ({ ...planFields(plan), default: plan.id === DEFAULT_PLAN })),
    call_statuses: CALL_STATUSES.map((status) => ({ id: status, live: LIVE_CALL_STATUSES.includes(status), final: FINAL_CALL_STATUSES.includes(status) })),
    call_directions: [...CALL_DIRECTIONS],
    agent_statuses: [...AGENT_STATUSES],
    turn_detection_modes: [...TURN_DETECTION_MODES],
    extraction_types: [...EXTRACTION_TYPES],
    tool_methods: [...TOOL_METHODS],
    webhook_delivery_statuses: [...DELIVERY_STATUSES],
    ledger_kinds: [...LEDGER_KINDS],
    batch_statuses: [...BATCH_STATUSES],
    batch_contact_statuses: [...CONTACT_STATUSES],
    workspace_statuses: [...WORKSPACE_STATUSES],
    log_sources: LOG_SOURCES.map((s) => s.id),
    log_credential_kinds: [...LOG_CREDENTIAL_KINDS],
  };
}
