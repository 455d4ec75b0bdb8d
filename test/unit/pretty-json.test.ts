import { expect } from 'chai';
import { prettyJson } from '../../providers/http-tools/pretty-json';

/** The layout of a tool's JSON answer: indented like JSON.stringify(_, null, 2), values verbatim. */
describe('prettyJson', () => {
  const samples = [
    '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
    ' { "spaced" : [ 1 , 2 ] , "empty": { } , "none" : [ ] } ',
    '[{"x":"a \\"quoted\\" {not, a: [bracket]}"},{}]',
    '"just a string"',
    '42',
    'null',
    '{"unicode":"नमस्ते é","nested":[[[1]]]}',
  ];
  for (const sample of samples) {
    it(`lays out ${sample.trim().slice(0, 30)} as JSON.stringify would`, () => {
      expect(prettyJson(sample)).to.equal(JSON.stringify(JSON.parse(sample), null, 2));
    });
  }

  it('keeps numbers beyond 2^53 and escapes exactly as sent', () => {
    expect(prettyJson('{"order_id":12345678901234567890,"price":1.10,"e":"\\u00e9"}')).to.equal(
      '{\n  "order_id": 12345678901234567890,\n  "price": 1.10,\n  "e": "\\u00e9"\n}',
    );
  });

  it('answers null for text that is not JSON', () => {
    for (const text of ['', '   ', 'hello', '{"a":', '<html></html>', "{'a':1}"]) expect(prettyJson(text), text).to.equal(null);
  });
});
