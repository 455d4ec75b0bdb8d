import { describeBounds } from './bounds';

const s = (n: number, c = 'x') => c.repeat(n);
const tool = { name: 'lookup', description: 'Looks up an order', url: 'https://example.com/orders' };
const withTool = { name: 'Tools', tools: [tool] };
const withExtraction = { name: 'Extractions', analytics: { extractions: [{ key: 'city' }] } };
const withChoice = { name: 'Choices', analytics: { extractions: [{ key: 'plan', type: 'choice', choices: [{ value: 'gold' }] }] } };
const many = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

/** Tool items and extraction items at their boundaries, and the rules across items. */
describeBounds('agents: the rules of tool and extraction items', [
  {
    title: 'tools',
    path: ['tools'],
    ok: [{ value: [] }],
    bad: [
      { value: many(51, (i) => ({ ...tool, name: `tool_${i}` })), type: 'too_long' },
      { value: tool, type: 'list_type' },
    ],
  },
  {
    title: 'tool name',
    path: ['tools', 0, 'name'],
    base: withTool,
    ok: [{ value: 'a' }, { value: '_' }, { value: `Z${s(63, '9')}` }, { value: 'end_call_2' }],
    bad: [
      { value: '1abc', type: 'string_pattern_mismatch' },
      { value: 'get-order', type: 'string_pattern_mismatch' },
      { value: `a${s(64)}`, type: 'string_pattern_mismatch' },
      { value: '', type: 'string_pattern_mismatch' },
      { value: undefined, type: 'missing' },
      { value: 'end_call', type: 'value_error' },
    ],
  },
  {
    title: 'tool names unique within the agent',
    path: ['tools', 1],
    base: withTool,
    ok: [
      {
        value: { ...tool, name: 'lookup_2' },
        stored: {
          ...tool,
          name: 'lookup_2',
          parameters: { type: 'object', properties: {} },
          method: 'POST',
          headers: {},
          pre_call_message: '',
          timeout_seconds: 8,
        },
      },
    ],
    bad: [{ value: { ...tool, description: 'Another one' }, type: 'value_error', loc: ['body', 'tools', 1, 'name'] }],
  },
  {
    title: 'tool description',
    path: ['tools', 0, 'description'],
    base: withTool,
    ok: [{ value: 'abc' }, { value: s(1000) }],
    bad: [
      { value: 'ab', type: 'string_too_short' },
      { value: s(1001), type: 'string_too_long' },
      { value: undefined, type: 'missing' },
    ],
  },
  {
    title: 'tool parameters',
    path: ['tools', 0, 'parameters'],
    base: withTool,
    ok: [
      { value: { type: 'object', properties: { order_id: { type: 'string', pattern: '^[0-9]+$' } }, required: ['order_id'] } },
      { value: { type: 'object', properties: { when: { $ref: '#/$defs/day' } }, $defs: { day: { type: 'string', format: 'date' } } } },
      { value: {} },
    ],
    bad: [
      { value: { type: 'object', properties: { order_id: { type: 'strin' } } }, type: 'value_error' },
      { value: { type: 'object', required: 'order_id' }, type: 'value_error' },
      { value: { type: 'object', properties: { when: { $ref: '#/$defs/missing' } } }, type: 'value_error' },
      { value: { type: 'string' }, type: 'value_error' },
      { value: { type: 'object', minProperties: -1 }, type: 'value_error' },
      { value: 'order_id', type: 'dict_type' },
    ],
  },
  {
    title: 'tool method',
    path: ['tools', 0, 'method'],
    base: withTool,
    ok: [{ value: 'GET' }, { value: 'POST' }],
    bad: [
      { value: 'PUT', type: 'enum' },
      { value: 'get', type: 'enum' },
    ],
  },
  {
    title: 'tool url',
    path: ['tools', 0, 'url'],
    base: withTool,
    ok: [{ value: 'http://internal.example/lookup?x=1' }],
    bad: [
      { value: 'ftp://example.com/x', type: 'string_pattern_mismatch' },
      { value: undefined, type: 'missing' },
      { value: `https://example.com/${s(1981)}`, type: 'string_too_long' },
    ],
  },
  {
    title: 'tool headers',
    path: ['tools', 0, 'headers'],
    base: withTool,
    // Names kept as sent; values are write-only, shown masked (docs/decisions/0195; tool-headers.test.ts).
    ok: [{ value: { Authorization: 'Bearer abc', 'X-Api.Key': '1' }, stored: { Authorization: '••••••', 'X-Api.Key': '••••••' } }],
    bad: [
      { value: { 'X-Count': 3 }, type: 'string_type', loc: ['body', 'tools', 0, 'headers', 'X-Count'] },
      { value: Object.fromEntries(many(51, (i) => [`X-H${i}`, 'v'] as const)), type: 'too_long' },
    ],
  },
  {
    title: 'tool pre_call_message',
    path: ['tools', 0, 'pre_call_message'],
    base: withTool,
    ok: [{ value: s(1000) }],
    bad: [{ value: s(1001), type: 'string_too_long' }],
  },
  {
    title: 'tool timeout_seconds',
    path: ['tools', 0, 'timeout_seconds'],
    base: withTool,
    ok: [{ value: 1 }, { value: 30 }, { value: 2.5 }],
    bad: [
      { value: 0.99, type: 'greater_than_equal' },
      { value: 30.01, type: 'less_than_equal' },
      { value: '8', type: 'float_type' },
    ],
  },
  {
    title: 'extractions',
    path: ['analytics', 'extractions'],
    ok: [{ value: many(50, (i) => ({ key: `k${i}`, label: '', type: 'text', description: '', choices: [] })) }],
    bad: [{ value: many(51, (i) => ({ key: `k${i}` })), type: 'too_long' }],
  },
  {
    title: 'extraction key',
    path: ['analytics', 'extractions', 0, 'key'],
    base: withExtraction,
    ok: [{ value: 'a' }, { value: `a${s(39, '_')}` }, { value: 'order_id2' }],
    bad: [
      { value: `a${s(40)}`, type: 'string_pattern_mismatch' },
      { value: 'City', type: 'string_pattern_mismatch' },
      { value: '1city', type: 'string_pattern_mismatch' },
      { value: '_city', type: 'string_pattern_mismatch' },
      { value: undefined, type: 'missing' },
    ],
  },
  {
    title: 'extraction keys unique within the agent',
    path: ['analytics', 'extractions', 1],
    base: withExtraction,
    ok: [{ value: { key: 'town' }, stored: { key: 'town', label: '', type: 'text', description: '', choices: [] } }],
    bad: [{ value: { key: 'city', label: 'Again' }, type: 'value_error', loc: ['body', 'analytics', 'extractions', 1, 'key'] }],
  },
  {
    title: 'extraction label',
    path: ['analytics', 'extractions', 0, 'label'],
    base: withExtraction,
    ok: [{ value: s(80) }],
    bad: [{ value: s(81), type: 'string_too_long' }],
  },
  {
    title: 'extraction type',
    path: ['analytics', 'extractions', 0, 'type'],
    base: withExtraction,
    ok: ['text', 'number', 'boolean', 'choice', 'date', 'list'].map((value) => ({ value })),
    bad: [{ value: 'money', type: 'enum' }],
  },
  {
    title: 'extraction description',
    path: ['analytics', 'extractions', 0, 'description'],
    base: withExtraction,
    ok: [{ value: s(600) }],
    bad: [{ value: s(601), type: 'string_too_long' }],
  },
  {
    title: 'extraction choices',
    path: ['analytics', 'extractions', 0, 'choices'],
    base: withChoice,
    ok: [{ value: many(20, (i) => ({ value: `v${i}`, when: '' })) }],
    bad: [{ value: many(21, (i) => ({ value: `v${i}` })), type: 'too_long' }],
  },
  {
    title: 'choice value',
    path: ['analytics', 'extractions', 0, 'choices', 0, 'value'],
    base: withChoice,
    ok: [{ value: 'g' }, { value: s(60) }],
    bad: [
      { value: '', type: 'string_too_short' },
      { value: s(61), type: 'string_too_long' },
      { value: undefined, type: 'missing' },
    ],
  },
  {
    title: 'choice when',
    path: ['analytics', 'extractions', 0, 'choices', 0, 'when'],
    base: withChoice,
    ok: [{ value: s(300) }],
    bad: [{ value: s(301), type: 'string_too_long' }],
  },
]);
