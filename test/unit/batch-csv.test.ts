import { expect } from 'chai';
import { MAX_CONTACTS, MAX_VALUE_COLUMNS, parseContactsCsv, type ContactsFile } from '../../domain/batches/contacts-csv';

const accepted = (file: ContactsFile) => {
  if (!file.ok) throw new Error(`refused: ${file.reason}`);
  return file;
};
const refused = (file: ContactsFile) => {
  if (file.ok) throw new Error('accepted');
  return file.reason;
};

describe('Batch contacts CSV', () => {
  it('takes the number column and turns the other columns into user_data, in file order', () => {
    const file = accepted(parseContactsCsv('name,Phone,city\nRavi,+919812345678,Pune\nAsha,+919812345679,\n'));
    expect(file.numberColumn).to.equal('Phone');
    expect(file.columns).to.deep.equal(['name', 'city']);
    expect(file.contacts).to.deep.equal([
      { row: 2, number: '+919812345678', user_data: { name: 'Ravi', city: 'Pune' } },
      // An empty cell is left out.
      { row: 3, number: '+919812345679', user_data: { name: 'Asha' } },
    ]);
    expect(file.rejected).to.deep.equal([]);
  });

  it('reports each rejected row with its line and reason: bad numbers, duplicates, wrong cell counts, long values', () => {
    const long = 'x'.repeat(2001);
    const csv = [
      'number,name',
      '+919800000001,A', // 2
      '98000 00002,B', // 3: no +
      '+91 98000-00003,C', // 4: separators dropped
      '+919800000001,D', // 5: duplicate of 2
      ',E', // 6: no number
      '+919800000004', // 7: one cell
      '', // 8: blank, skipped
      `+919800000005,${long}`, // 9
      '+0123456789,F', // 10: leading 0
      '"+919800000006","multi', // 11-12: a quoted cell over two lines
      'line"',
      '+919800000003,G', // 13: duplicate of 4 (after normalising)
    ].join('\r\n');
    const file = accepted(parseContactsCsv(csv));
    expect(file.contacts.map((c) => [c.row, c.number])).to.deep.equal([
      [2, '+919800000001'],
      [4, '+919800000003'],
      [11, '+919800000006'],
    ]);
    expect(file.contacts[2].user_data).to.deep.equal({ name: 'multi\r\nline' });
    expect(file.rejected).to.deep.equal([
      { row: 3, number: '98000 00002', reason: 'not an E.164 number (+ and 7 to 15 digits, e.g. +919812345678)' },
      { row: 5, number: '+919800000001', reason: 'duplicate of row 2' },
      { row: 6, number: '', reason: 'no number' },
      { row: 7, number: '+919800000004', reason: 'has 1 cells; the header has 2' },
      { row: 9, number: '+919800000005', reason: 'the value of "name" is longer than 2000 characters' },
      { row: 10, number: '+0123456789', reason: 'not an E.164 number (+ and 7 to 15 digits, e.g. +919812345678)' },
      { row: 13, number: '+919800000003', reason: 'duplicate of row 4' },
    ]);
  });

  it('takes CRLF, LF and CR line ends in one file, counting lines as they are', () => {
    const file = accepted(parseContactsCsv('number,name\r\n+919800000001,A\n\n"+919800000002","two\r\nlines"\r+919800000003,C\n+91,D'));
    expect(file.contacts.map((c) => [c.row, c.number, c.user_data.name])).to.deep.equal([
      [2, '+919800000001', 'A'],
      [4, '+919800000002', 'two\r\nlines'],
      [6, '+919800000003', 'C'],
    ]);
    expect(file.rejected).to.deep.equal([{ row: 7, number: '+91', reason: 'not an E.164 number (+ and 7 to 15 digits, e.g. +919812345678)' }]);
  });

  it('strips a UTF-8 byte order mark and takes a named number column', () => {
    const file = accepted(parseContactsCsv(Buffer.from('\ufeffnumber,alt\n+919800000001,+919800000002\n'), 'alt'));
    expect(file.numberColumn).to.equal('alt');
    expect(file.contacts).to.deep.equal([{ row: 2, number: '+919800000002', user_data: { number: '+919800000001' } }]);
  });

  it('refuses files it cannot use as a whole', () => {
    expect(refused(parseContactsCsv(''))).to.match(/empty/);
    expect(refused(parseContactsCsv('name,city\nRavi,Pune\n'))).to.match(/^no number column/);
    expect(refused(parseContactsCsv('number,name\n+919800000001,A\n', 'mobile'))).to.equal('no column "mobile" in the header');
    expect(refused(parseContactsCsv('number,name,name\n'))).to.equal('the column "name" appears twice in the header');
    expect(refused(parseContactsCsv('number,,x\n'))).to.equal('column 2 of the header has no name');
    expect(refused(parseContactsCsv('number,a.b\n'))).to.equal('the column name "a.b" may not contain "." or start with "$"');
    expect(refused(parseContactsCsv('number,$x\n'))).to.equal('the column name "$x" may not contain "." or start with "$"');
    expect(refused(parseContactsCsv('number,"open\n+919800000001,A\n'))).to.match(/^not a readable CSV file/);
    const wide = ['number', ...Array.from({ length: MAX_VALUE_COLUMNS + 1 }, (_, i) => `c${i}`)].join(',');
    expect(refused(parseContactsCsv(`${wide}\n`))).to.match(/too many columns/);
    const justRight = ['number', ...Array.from({ length: MAX_VALUE_COLUMNS }, (_, i) => `c${i}`)].join(',');
    expect(parseContactsCsv(`${justRight}\n`).ok).to.equal(true);
  });

  it(`takes at most ${MAX_CONTACTS} rows`, () => {
    const rows = (n: number) => ['number', ...Array.from({ length: n }, (_, i) => `+9198${String(i).padStart(8, '0')}`)].join('\n');
    expect(accepted(parseContactsCsv(rows(MAX_CONTACTS))).contacts).to.have.length(MAX_CONTACTS);
    expect(refused(parseContactsCsv(rows(MAX_CONTACTS + 1)))).to.match(/too many rows/);
  });
});
