import { expect } from 'chai';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../domain/webhooks/event-types';
import { endpointIssues, normalisedEvents, unknownEventTypes, webhookUrlProblem } from '../../domain/webhooks/endpoint-rules';

/** The webhook endpoint rules the OpenAPI schema cannot state: the URL's scheme and host, and known event types. */
describe('webhook endpoint rules', () => {
  describe('the URL', () => {
    it('accepts https URLs with ports, paths, queries and fragments', () => {
      for (const url of [
        'https://example.com',
        'https://example.com/',
        'https://hooks.example.com:8443/voice/events?source=agents&v=1#x',
        'https://203.0.113.9/hook',
        'https://[2001:db8::1]:8443/hook',
        'HTTPS://Example.COM/Hook',
        'https://bücher.example/hook',
      ]) {
        expect(webhookUrlProblem(url), url).to.equal(null);
      }
    });

    it('accepts plain http for localhost and 127.0.0.1 only, with any port and path', () => {
      for (const url of ['http://localhost', 'http://localhost:3000/webhooks', 'http://127.0.0.1', 'http://127.0.0.1:65535/a?b=c', 'http://LOCALHOST:8080/']) {
        expect(webhookUrlProblem(url), url).to.equal(null);
      }
    });

    it('refuses plain http for every other host, including other spellings of loopback', () => {
      for (const url of [
        'http://example.com/hook',
        'http://10.0.0.1/hook',
        'http://127.0.0.2/hook',
        'http://127.1/hook',
        'http://0x7f000001/hook',
        'http://localhost./hook',
        'http://localhost.example.com/hook',
        'http://[::1]/hook',
        'http://sub.localhost/hook',
      ]) {
        expect(webhookUrlProblem(url), url).to.match(/must use https; plain http is allowed only for localhost and 127\.0\.0\.1/);
      }
    });

    it('refuses other schemes, naming the one used', () => {
      expect(webhookUrlProblem('ftp://example.com/hook')).to.equal('must use https (it uses ftp)');
      expect(webhookUrlProblem('ws://example.com/hook')).to.equal('must use https (it uses ws)');
      expect(webhookUrlProblem('mailto:ops@example.com')).to.equal('must use https (it uses mailto)');
      expect(webhookUrlProblem('javascript:alert(1)')).to.equal('must use https (it uses javascript)');
    });

    it('refuses what is not an absolute URL', () => {
      for (const url of ['', 'example.com/hook', '/hooks', 'https://', 'https://:443/x', 'http://localhost:99999/', 'https://exa%mple.com']) {
        expect(webhookUrlProblem(url), url).to.be.a('string');
      }
      expect(webhookUrlProblem('example.com/hook')).to.match(/^must be an absolute URL/);
    });

    it('refuses forms the URL parser would repair: a missing or doubled slash, backslashes', () => {
      for (const url of ['https:example.com/hook', 'https:/example.com/hook', 'https:\\\\example.com/hook', 'https:///example.com/hook']) {
        expect(webhookUrlProblem(url), url).to.be.a('string');
      }
    });

    it('refuses credentials in the URL, even an empty user', () => {
      for (const url of ['https://user:secret@example.com/hook', 'https://token@example.com/hook', 'https://@example.com/hook', 'http://user@localhost/hook']) {
        expect(webhookUrlProblem(url), url).to.match(/must not contain credentials/);
      }
    });

    it('accepts an @ after the host (in the path or query)', () => {
      expect(webhookUrlProblem('https://example.com/users/@me?by=a@b.c')).to.equal(null);
    });

    it('refuses spaces and control characters anywhere, also at the ends', () => {
      for (const url of [
        ' https://example.com',
        'https://example.com ',
        'https://example.com/a b',
        'https://example.com/\t',
        'https://example.com/\u0000',
        'https://example.com/\u00a0',
      ]) {
        expect(webhookUrlProblem(url), JSON.stringify(url)).to.equal('must not contain spaces or control characters');
      }
    });
  });

  describe('event types', () => {
    it('knows every subscribable type and *, not ping', () => {
      expect(unknownEventTypes(['*', ...SUBSCRIBABLE_EVENT_TYPES])).to.deep.equal([]);
      expect(unknownEventTypes(['call.started', 'ping', 'Call.Started', 'call.*', ''])).to.deep.equal([
        { index: 1, type: 'ping' },
        { index: 2, type: 'Call.Started' },
        { index: 3, type: 'call.*' },
        { index: 4, type: '' },
      ]);
    });

    it('removes duplicates and sorts', () => {
      expect(normalisedEvents(['tool.result', 'call.started', 'tool.result', 'agent.reply'])).to.deep.equal(['agent.reply', 'call.started', 'tool.result']);
    });

    it('turns any list holding * into ["*"]', () => {
      expect(normalisedEvents(['call.started', '*', 'agent.reply'])).to.deep.equal(['*']);
      expect(normalisedEvents(['*', '*'])).to.deep.equal(['*']);
    });

    it('does not change the list it is given', () => {
      const events = ['b', 'a', 'a'];
      normalisedEvents(events);
      expect(events).to.deep.equal(['b', 'a', 'a']);
    });
  });

  describe('as 422 issues', () => {
    it('reports the URL at body.url and each unknown type at its position, all at once', () => {
      expect(endpointIssues({ url: 'http://example.com', events: ['call.started', 'call.exploded', 'ping'] })).to.deep.equal([
        {
          type: 'value_error',
          loc: ['body', 'url'],
          msg: 'url must use https; plain http is allowed only for localhost and 127.0.0.1',
          input: 'http://example.com',
        },
        {
          type: 'enum',
          loc: ['body', 'events', 1],
          msg: 'unknown event type "call.exploded"; use "*" for every event or a type from GET /webhooks/events',
          input: 'call.exploded',
        },
        {
          type: 'enum',
          loc: ['body', 'events', 2],
          msg: 'unknown event type "ping"; use "*" for every event or a type from GET /webhooks/events',
          input: 'ping',
        },
      ]);
    });

    it('checks only the fields given (a change that sends neither has no issue)', () => {
      expect(endpointIssues({})).to.deep.equal([]);
      expect(endpointIssues({ events: ['*'] })).to.deep.equal([]);
      expect(endpointIssues({ url: 'https://example.com' })).to.deep.equal([]);
    });
  });
});
