import { expect } from 'chai';
import { templateVariables } from '../../domain/agents/variables';

/** An agent's `variables`: every `{variable}` of the welcome message, then of the prompt, in order of first use, each once. */
describe('agent template variables', () => {
  it("lists the welcome message's variables first, then the prompt's, each once, in order of first use", () => {
    expect(templateVariables('Hi {name}, about {amount}', 'Remind {name} that {amount} is due on {due_date}; {name} again')).to.deep.equal([
      'name',
      'amount',
      'due_date',
    ]);
    expect(templateVariables('{b} {a}', '{a} {c} {b}')).to.deep.equal(['b', 'a', 'c']);
  });

  it('finds none in empty or plain texts', () => {
    expect(templateVariables('', '')).to.deep.equal([]);
    expect(templateVariables('Hello there', 'No placeholders here')).to.deep.equal([]);
  });

  it('takes names of a letter or underscore then letters, digits or underscores', () => {
    expect(templateVariables('{a} {_x} {Name2} {snake_case_9}', '')).to.deep.equal(['a', '_x', 'Name2', 'snake_case_9']);
  });

  it('treats other braces as plain text: JSON, digits first, spaces, dashes, empty', () => {
    expect(templateVariables('{1st} { name } {first-name} {} {{', 'Answer as {"ok": true} or {a.b}')).to.deep.equal([]);
  });

  it('is case-sensitive', () => {
    expect(templateVariables('{Name}', '{name}')).to.deep.equal(['Name', 'name']);
  });

  it('finds a variable inside doubled braces', () => {
    expect(templateVariables('{{name}}', '')).to.deep.equal(['name']);
  });
});
