import { Router } from 'express';
import { CATALOG, agentDefaults, llmModels, llmProvidersAllowed, ttsModels } from '../../domain/agents/catalog';
import type { Synthesizer } from '../../providers/tts/types';
import { isDefaultVoice } from '../../providers/tts/voices';
import { workspaceAccessOf } from '../auth/context';
import { fromProvider } from '../../domain/shared/provider-errors';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type CatalogView = operations['getCatalog']['responses']['200']['content']['application/json'];
type VoiceView = operations['listVoices']['responses']['200']['content']['application/json'][number];

/** The static catalog (domain/agents/catalog.ts) for the caller's plan, and the voices of the speech-synthesis service. */
export function catalogRoutes(deps: { synthesizer: Synthesizer }): Router {
  const router = apiRouter();

  router.get('/catalog', (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const allowed = llmProvidersAllowed(workspace.plan);
    const catalog: CatalogView = {
      plan: workspace.plan,
      llm_providers: CATALOG.llmProviders.map((p) => ({ id: p.id, name: p.name, default_model: p.defaultModel, allowed: allowed.includes(p.id) })),
      llm_providers_allowed: allowed,
      llm_models: llmModels(),
      tts_providers: CATALOG.ttsProviders.map((p) => ({ id: p.id, name: p.name, default_model: p.defaultModel })),
      tts_models: ttsModels(),
      transcribers: CATALOG.transcriberProviders.map((p) => ({ id: p.id, name: p.name, model: p.model, settings: [...p.settings] })),
      defaults: agentDefaults() as CatalogView['defaults'],
    };
    res.json(catalog);
  });

  router.get('/catalog/voices', async (_req, res) => {
    const voices = await fromProvider(deps.synthesizer.listVoices());
    // `default`: the voice an agent of that language speaks with while its voice_id is empty.
    res.json(voices.map((v) => ({ id: v.id, name: v.name, language: v.language, gender: v.gender, default: isDefaultVoice(voices, v) }) satisfies VoiceView));
  });

  return router;
}
