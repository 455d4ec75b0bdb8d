import { expect } from 'chai';
import {
  agentDefaults,
  CATALOG,
  defaultLlmProvider,
  defaultTtsProvider,
  llmModels,
  llmProvidersAllowed,
  transcriberModelFor,
  transcriberSettingsFor,
  ttsModels,
} from '../../domain/agents/catalog';
import { openApiDocument } from '../../api/openapi-document';
import { PLANS } from '../../domain/billing/plans';

type SchemaNode = { $ref?: string; default?: unknown; properties?: Record<string, SchemaNode> };

/** The static catalog, and the agreement of its defaults with the OpenAPI document. */
describe('the catalog', () => {
  it('lets every plan use openai and local, and only Growth and Scale azure_openai', () => {
    expect(llmProvidersAllowed('starter')).to.deep.equal(['openai', 'local']);
    expect(llmProvidersAllowed('growth')).to.deep.equal(['openai', 'local', 'azure_openai']);
    expect(llmProvidersAllowed('scale')).to.deep.equal(['openai', 'local', 'azure_openai']);
    expect(llmProvidersAllowed('no-such-plan')).to.deep.equal([]);
  });

  it('names only plans that exist, and default models that are models of their provider', () => {
    for (const provider of CATALOG.llmProviders) {
      for (const plan of provider.plans) expect(PLANS).to.have.property(plan);
      expect(provider.models.map((m) => m.id)).to.include(provider.defaultModel);
    }
    for (const provider of CATALOG.ttsProviders) expect(provider.models.map((m) => m.id)).to.include(provider.defaultModel);
  });

  it('has default providers every plan may use', () => {
    for (const plan of Object.keys(PLANS)) expect(llmProvidersAllowed(plan)).to.include(defaultLlmProvider);
    expect(CATALOG.ttsProviders.map((p) => p.id)).to.include(defaultTtsProvider);
  });

  it('lists llm_models and tts_models with their providers', () => {
    expect(llmModels()).to.deep.include({ provider: 'local', id: 'local-chat', name: 'Local chat model' });
    expect(ttsModels()).to.deep.include({ provider: 'openai', id: 'tts-1', name: 'TTS 1' });
  });

  it('gives each speech-recognition provider its model and the settings it uses', () => {
    expect(transcriberModelFor('provider_a')).to.equal('flux-general-multi');
    expect(transcriberModelFor('provider_b')).to.equal('nova-3');
    expect(transcriberSettingsFor('provider_a')).to.deep.equal(['turn_detection', 'keyterms']);
    expect(transcriberSettingsFor('provider_b')).to.deep.equal(['language', 'endpointing_ms', 'keyterms']);
    expect(() => transcriberModelFor('provider_c')).to.throw(/unknown transcriber provider/);
  });

  it('hands out fresh defaults each time (no shared arrays)', () => {
    const a = agentDefaults();
    a.transcriber.keyterms.push('changed');
    expect(agentDefaults().transcriber.keyterms).to.deep.equal([]);
  });

  it('agrees with every default the OpenAPI document states for an Agent field', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, SchemaNode> } };
    const resolve = (node: SchemaNode): SchemaNode =>
      node.$ref ? { ...doc.components.schemas[node.$ref.split('/').pop() as string], ...node, $ref: undefined } : node;
    const stated: [string, unknown][] = [];
    const walk = (node: SchemaNode, path: string[]) => {
      const schema = resolve(node);
      if (schema.default !== undefined) stated.push([path.join('.'), schema.default]);
      for (const [key, child] of Object.entries(schema.properties ?? {})) walk(child, [...path, key]);
    };
    walk(doc.components.schemas.AgentInput, []);
    expect(stated.length).to.be.greaterThan(30);
    const defaults = agentDefaults() as unknown as Record<string, unknown>;
    for (const [path, value] of stated) {
      const actual = path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], defaults);
      expect(actual, path).to.deep.equal(value);
    }
  });
});
