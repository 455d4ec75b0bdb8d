import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes, so that ops can filter the Temporal UI by workspace, agent,
 * call status and kind of workflow. The launcher and the test servers register exactly
 * these (see `searchAttributeRegistrations`).
 */
export const WorkspaceId = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const AgentId = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const CallStatus = defineSearchAttributeKey('CallStatus', SearchAttributeType.KEYWORD);
export const Kind = defineSearchAttributeKey('Kind', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [WorkspaceId, AgentId, CallStatus, Kind];

/** `--search-attribute Name=Keyword` arguments for `temporal server start-dev`. */
export function searchAttributeRegistrations(): string[] {
  return SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=${CLI_TYPE_NAMES[key.type]}`]);
}

/** The type names the Temporal CLI takes, as in `temporal operator search-attribute create`. */
const CLI_TYPE_NAMES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};
