import { describeBounds } from './bounds';

const s = (n: number, c = 'x') => c.repeat(n);
const range = (min: number, max: number, below: number, above: number, type: 'int' | 'float' = 'int') => ({
  ok: [{ value: min }, { value: max }],
  bad: [
    { value: below, type: 'greater_than_equal' },
    { value: above, type: 'less_than_equal' },
    { value: type === 'int' ? min + 0.5 : String(min), type: type === 'int' ? 'int_type' : 'float_type' },
  ],
});
const flag = { ok: [{ value: true }, { value: false }], bad: [{ value: 'yes', type: 'bool_type' }] };

/** The Agent table's fields at their boundaries (tools and extractions: items-rules.test.ts). */
describeBounds('agents: the rules of the Agent table', [
  {
    title: 'name',
    path: ['name'],
    ok: [{ value: 'a' }, { value: s(120) }],
    bad: [
      { value: '', type: 'string_too_short' },
      { value: s(121), type: 'string_too_long' },
      { value: '   ', type: 'string_pattern_mismatch' },
      { value: 7, type: 'string_type' },
      { value: undefined, type: 'missing' },
    ],
  },
  { title: 'welcome_message', path: ['welcome_message'], ok: [{ value: '' }, { value: s(2000) }], bad: [{ value: s(2001), type: 'string_too_long' }] },
  {
    title: 'system_prompt',
    path: ['system_prompt'],
    ok: [{ value: s(32000) }],
    bad: [
      { value: s(32001), type: 'string_too_long' },
      { value: null, type: 'string_type' },
    ],
  },
  { title: 'llm.temperature', path: ['llm', 'temperature'], ...range(0, 2, -0.01, 2.01, 'float') },
  { title: 'llm.max_tokens', path: ['llm', 'max_tokens'], ...range(16, 4096, 15, 4097) },
  { title: 'voice.speed', path: ['voice', 'speed'], ...range(0.6, 1.5, 0.59, 1.51, 'float') },
  {
    title: 'voice.language',
    path: ['voice', 'language'],
    ok: [{ value: 'en-IN' }, { value: 'ta' }],
    bad: [{ value: 'Hindi', type: 'string_pattern_mismatch' }],
  },
  { title: 'voice.voice_id', path: ['voice', 'voice_id'], ok: [{ value: null }], bad: [{ value: s(201), type: 'string_too_long' }] },
  { title: 'voice.voice_name', path: ['voice', 'voice_name'], ok: [{ value: 'Meera' }], bad: [{ value: 3, type: 'string_type' }] },
  {
    title: 'transcriber.provider',
    path: ['transcriber', 'provider'],
    ok: [{ value: 'provider_a' }, { value: 'provider_b' }],
    bad: [{ value: 'provider_c', type: 'enum' }],
  },
  {
    title: 'transcriber.turn_detection',
    path: ['transcriber', 'turn_detection'],
    ok: [{ value: 'responsive' }, { value: 'balanced' }, { value: 'patient' }],
    bad: [{ value: 'fast', type: 'enum' }],
  },
  { title: 'transcriber.language', path: ['transcriber', 'language'], ok: [{ value: 'mr' }], bad: [{ value: 'hi_IN', type: 'string_pattern_mismatch' }] },
  { title: 'transcriber.endpointing_ms', path: ['transcriber', 'endpointing_ms'], ...range(10, 3000, 9, 3001) },
  {
    title: 'transcriber.keyterms',
    path: ['transcriber', 'keyterms'],
    ok: [{ value: Array.from({ length: 100 }, (_, i) => `term${i}`) }],
    bad: [
      { value: Array.from({ length: 101 }, (_, i) => `term${i}`), type: 'too_long' },
      { value: 'EMI', type: 'list_type' },
    ],
  },
  {
    title: 'a keyterm',
    path: ['transcriber', 'keyterms', 0],
    ok: [{ value: s(100) }],
    bad: [
      { value: '', type: 'string_too_short' },
      { value: s(101), type: 'string_too_long' },
    ],
  },
  { title: 'call.max_duration_seconds', path: ['call', 'max_duration_seconds'], ...range(30, 3600, 29, 3601) },
  { title: 'call.hangup_after_silence_seconds', path: ['call', 'hangup_after_silence_seconds'], ...range(5, 120, 4, 121) },
  { title: 'call.allow_interruptions', path: ['call', 'allow_interruptions'], ...flag },
  { title: 'call.interruption_min_words', path: ['call', 'interruption_min_words'], ...range(1, 10, 0, 11) },
  {
    title: 'call.call_start_hour',
    path: ['call', 'call_start_hour'],
    base: { name: 'Hours', call: { call_end_hour: 24 } },
    ...range(0, 23, -1, 24),
  },
  {
    title: 'call.call_end_hour',
    path: ['call', 'call_end_hour'],
    base: { name: 'Hours', call: { call_start_hour: 0 } },
    ...range(1, 24, 0, 25),
  },
  {
    title: 'calling hours: start before end',
    path: ['call', 'call_start_hour'],
    base: { name: 'Hours', call: { call_end_hour: 10 } },
    ok: [{ value: 9 }],
    bad: [
      { value: 10, type: 'value_error' },
      { value: 11, type: 'value_error' },
    ],
  },
  {
    title: 'call.timezone',
    path: ['call', 'timezone'],
    ok: [{ value: 'Europe/London' }, { value: 'UTC' }, { value: 'asia/kolkata', stored: 'Asia/Kolkata' }],
    bad: [
      { value: 'Mars/Olympus', type: 'value_error' },
      { value: '+05:30', type: 'value_error' },
      { value: '', type: 'string_too_short' },
    ],
  },
  { title: 'call.record', path: ['call', 'record'], ...flag },
  { title: 'call.hangup_message', path: ['call', 'hangup_message'], ok: [{ value: s(1000) }], bad: [{ value: s(1001), type: 'string_too_long' }] },
  { title: 'call.hangup_on_prompt', path: ['call', 'hangup_on_prompt'], ...flag },
  { title: 'call.hangup_prompt', path: ['call', 'hangup_prompt'], ok: [{ value: s(4000) }], bad: [{ value: s(4001), type: 'string_too_long' }] },
  { title: 'call.hangup_interruptible', path: ['call', 'hangup_interruptible'], ...flag },
  { title: 'call.check_user_online', path: ['call', 'check_user_online'], ...flag },
  { title: 'call.user_online_message', path: ['call', 'user_online_message'], ok: [{ value: 'Hello?' }], bad: [{ value: s(1001), type: 'string_too_long' }] },
  { title: 'call.user_online_after_seconds', path: ['call', 'user_online_after_seconds'], ...range(3, 60, 2, 61) },
  { title: 'analytics.summarize', path: ['analytics', 'summarize'], ...flag },
  {
    title: 'analytics.extraction_prompt',
    path: ['analytics', 'extraction_prompt'],
    ok: [{ value: s(4000) }],
    bad: [{ value: s(4001), type: 'string_too_long' }],
  },
  {
    title: 'webhook_url',
    path: ['webhook_url'],
    ok: [
      { value: 'https://hooks.example.com/agent?x=1' },
      { value: 'http://localhost:3000/hook' },
      { value: 'http://127.0.0.1/hook' },
      { value: `https://example.com/${s(480)}` },
      { value: null },
    ],
    bad: [
      { value: 'http://example.com/hook', type: 'string_pattern_mismatch' },
      { value: 'ftp://example.com', type: 'string_pattern_mismatch' },
      { value: `https://example.com/${s(481)}`, type: 'string_too_long' },
      { value: 'https://user:secret@hooks.example.com/agent', type: 'value_error' },
    ],
  },
  {
    title: 'phone_number',
    path: ['phone_number'],
    ok: [{ value: null }],
    bad: [
      { value: '9876543210', type: 'string_pattern_mismatch' },
      { value: '+0123456789', type: 'string_pattern_mismatch' },
      { value: '+123456', type: 'string_pattern_mismatch' },
      { value: `+1${s(15, '2')}`, type: 'string_pattern_mismatch' },
    ],
  },
  { title: 'status', path: ['status'], ok: [{ value: 'active' }, { value: 'paused' }], bad: [{ value: 'stopped', type: 'enum' }] },
  {
    title: 'knowledge_base_ids',
    path: ['knowledge_base_ids'],
    ok: [{ value: [] }],
    bad: [
      { value: Array.from({ length: 11 }, (_, i) => i.toString(16).padStart(32, '0')), type: 'too_long' },
      { value: ['0'.repeat(32), '0'.repeat(32)], type: 'list_not_unique' },
      { value: ['ABC'], type: 'string_pattern_mismatch', loc: ['body', 'knowledge_base_ids', 0] },
      { value: ['f'.repeat(32)], type: 'value_error', loc: ['body', 'knowledge_base_ids', 0] },
    ],
  },
  { title: 'a field the Agent does not have', path: ['colour'], ok: [], bad: [{ value: 'blue', type: 'extra_forbidden' }] },
  { title: 'a read-only field', path: ['version'], ok: [], bad: [{ value: 3, type: 'extra_forbidden' }] },
  { title: 'a nested field the Agent does not have', path: ['call', 'ring_seconds'], ok: [], bad: [{ value: 20, type: 'extra_forbidden' }] },
  { title: 'a nested object', path: ['call'], ok: [], bad: [{ value: 'short', type: 'dict_type' }] },
]);
