import { expect } from 'chai';
import { decodeTermCounts, encodeTermCounts, STOP_WORDS, termCounts, tokenize } from '../../domain/knowledge/tokenizer';

describe('knowledge tokenizer', () => {
  it('lowercases, splits on anything but letters and digits, and drops stop words', () => {
    expect(tokenize('What is the REFUND policy? Refunds take 5-7 days (e-mail us)!')).to.deep.equal([
      'refund',
      'policy',
      'refunds',
      'take',
      '5',
      '7',
      'days',
      'e',
      'mail',
    ]);
  });

  it('keeps digits and letters of any script together, and splits on punctuation and symbols', () => {
    expect(tokenize('₹999/month, GST 18%; ñandú café_2024')).to.deep.equal(['999', 'month', 'gst', '18', 'ñandú', 'café', '2024']);
  });

  it('keeps Devanagari words whole, with their vowel signs and virama', () => {
    expect(tokenize('हिन्दी में रिफ़ंड नीति क्या है?')).to.deep.equal(['हिन्दी', 'रिफ़ंड', 'नीति', 'क्या']);
  });

  it('matches a nukta letter typed precomposed or as two code points, and ignores zero-width joiners', () => {
    const precomposed = '\u0958'; // क़
    const decomposed = '\u0915\u093c'; // क + ़
    expect(tokenize(`${precomposed}ानून`)).to.deep.equal(tokenize(`${decomposed}ानून`));
    expect(tokenize('क्\u200dष')).to.deep.equal(tokenize('क्ष'));
  });

  it('drops the Hindi function words of its list', () => {
    expect(STOP_WORDS.has('है')).to.equal(true);
    expect(tokenize('दुकान का समय')).to.deep.equal(['दुकान', 'समय']);
  });

  it('answers nothing for text of stop words and punctuation only', () => {
    expect(tokenize('Is it? -- and/or ...')).to.deep.equal([]);
  });

  it('counts terms', () => {
    expect([...termCounts(tokenize('price price PRICE list'))]).to.deep.equal([
      ['price', 3],
      ['list', 1],
    ]);
  });

  it('stores term counts as one string and reads them back, Devanagari included', () => {
    const counts = termCounts(tokenize('Price list: price २ रुपये, price १०'));
    expect(encodeTermCounts(counts)).to.equal('price:3 list:1 २:1 रुपये:1 १०:1');
    expect(decodeTermCounts(encodeTermCounts(counts))).to.deep.equal(counts);
    expect(decodeTermCounts('')).to.deep.equal(new Map());
  });
});
