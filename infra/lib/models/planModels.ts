// Which model serves each model step once deployed, decided at synth time with the runtime's own
// reading of a `model` string, so that what the stack grants and what the handlers call are one list.
// A deployment must never answer with the offline echo provider by accident: it only repeats its
// prompt, which looks like a working model in a quick test and is useless to a real user.
import { StepforgeError } from '@stepforge/contract';
import { parseModelSpec, type ProviderName } from '@stepforge/runtime';
import type { ModelStep } from './modelSteps.js';

/** The project's model settings (`cdk.json` context or `-c key=value`). */
export interface ModelOptions {
  /** `modelProvider`: the provider of steps whose model names none (`bedrock`, `openai` or `local`). */
  readonly provider?: string;
  /** `model`: the model of steps that name none, written as a step writes it (`bedrock:<model id>`, or a bare id on `provider`). */
  readonly model?: string;
  /** `allowOfflineModel`: deploy steps that run on the offline echo provider anyway (tests, LocalStack). */
  readonly allowOffline?: boolean;
  /** `openaiApiKeySecret`: the secret (Secrets Manager id, or SSM `/stepforge/<id>`) holding the OpenAI-compatible endpoint's key. */
  readonly openaiApiKeySecret?: string;
  /** `openaiBaseUrl`: the OpenAI-compatible endpoint (default OpenAI's). */
  readonly openaiBaseUrl?: string;
}

/** What the stack deploys for models. */
export interface ModelPlan {
  /** Environment of the model handler (STEPFORGE_MODEL_PROVIDER, STEPFORGE_MODEL, STEPFORGE_OPENAI_*). */
  readonly environment: Readonly<Record<string, string>>;
  /** Bedrock model ids and inference profiles (ids or ARNs) the model handler may invoke, sorted. */
  readonly bedrockModels: readonly string[];
  /** Secret ids the model handler reads (the OpenAI-compatible key). */
  readonly secrets: readonly string[];
  /** Model steps that run on the offline echo provider (deployed only with allowOffline). */
  readonly offlineSteps: readonly ModelStep[];
}

const PROVIDERS: readonly ProviderName[] = ['bedrock', 'openai', 'local'];
const OPENAI_DEFAULT_URL = 'https://api.openai.com/v1';
const SECRET_ID = /^[A-Za-z0-9_.\-/]+$/;
/** Most steps an error lists by name. */
const LISTED = 5;

/** Resolve every model step against the project settings; throws a StepforgeError naming the fix. */
export function planModels(steps: readonly ModelStep[], options: ModelOptions): ModelPlan {
  const project = projectDefault(options);
  const bedrock = new Set<string>();
  const offline: ModelStep[] = [];
  const unset: ModelStep[] = [];
  let openai = false;
  for (const step of steps) {
    if (step.model?.startsWith('{%')) {
      throw new StepforgeError(
        'dynamic_model',
        `step "${step.step}" of workflow ${step.workflow} chooses its model at run time (${step.model}); the stack grants only models it can read at synth time: name the model`,
        { location: step.location ?? { file: step.file, line: 1, column: 1 } },
      );
    }
    const spec = parseModelSpec(step.model);
    const provider = spec.prefix ?? project.provider;
    const modelId = spec.modelId === 'default' && provider !== 'local' ? project.modelId : spec.modelId;
    if (provider === 'local') offline.push(step);
    else if (modelId === undefined || modelId === 'default') unset.push(step);
    else if (provider === 'bedrock') bedrock.add(modelId);
    else openai = true;
  }
  if (unset.length > 0) {
    throw new StepforgeError(
      'model_unset',
      `${listSteps(unset)} ${unset.length === 1 ? 'names' : 'name'} no model, and the project names none for the ${project.provider} provider: a deployed step would fail at once with ConfigError`,
      {
        location: where(unset[0]!),
        hint: `give the step a model (model: "bedrock:<model id>", or an inference profile such as "bedrock:us.anthropic.claude-3-5-haiku-20241022-v1:0"), or deploy with -c model=${project.provider}:<model id>`,
      },
    );
  }
  if (offline.length > 0 && options.allowOffline !== true) {
    throw new StepforgeError(
      'offline_model',
      `${listSteps(offline)} would run on the offline echo provider (local), which only repeats its prompt and is no model; the stack refuses to deploy it unasked`,
      {
        location: where(offline[0]!),
        hint: 'name a model in the step (model: "bedrock:<model id>") or for the project (-c model=bedrock:<model id>); to deploy the echo provider on purpose (tests, LocalStack) pass -c allowOfflineModel=true',
      },
    );
  }
  const baseUrl = options.openaiBaseUrl ?? OPENAI_DEFAULT_URL;
  const secrets: string[] = [];
  const environment: Record<string, string> = { STEPFORGE_MODEL_PROVIDER: project.provider };
  if (project.modelId !== undefined) environment['STEPFORGE_MODEL'] = project.modelId;
  if (options.openaiApiKeySecret !== undefined) {
    if (!SECRET_ID.test(options.openaiApiKeySecret)) {
      throw new StepforgeError(
        'invalid_model_option',
        `openaiApiKeySecret "${options.openaiApiKeySecret}" is not a secret id (letters, digits, _ . - /)`,
        { hint: 'pass the Secrets Manager secret name, e.g. -c openaiApiKeySecret=stepforge/openai-key' },
      );
    }
    secrets.push(options.openaiApiKeySecret);
    environment['STEPFORGE_OPENAI_API_KEY'] = `$secret:${options.openaiApiKeySecret}`;
  } else if (openai && new URL(baseUrl).hostname === 'api.openai.com') {
    throw new StepforgeError(
      'openai_key_unset',
      'workflows call models on the OpenAI API, and the stack has no secret holding its key: every such step would fail with ConfigError',
      {
        hint: 'store the key in Secrets Manager and deploy with -c openaiApiKeySecret=<secret id> (the key is read from the secret at run time, never put in the template)',
      },
    );
  }
  if (options.openaiBaseUrl !== undefined) environment['STEPFORGE_OPENAI_BASE_URL'] = options.openaiBaseUrl;
  return { environment, bedrockModels: [...bedrock].sort(), secrets, offlineSteps: offline };
}

/** The provider and model of steps that name none: `model` (as a step writes it) wins over `provider`. */
function projectDefault(options: ModelOptions): { provider: ProviderName; modelId?: string } {
  if (options.provider !== undefined && !(PROVIDERS as readonly string[]).includes(options.provider)) {
    throw new StepforgeError('invalid_model_option', `modelProvider must be one of ${PROVIDERS.join(', ')} (got "${options.provider}")`, {
      hint: 'e.g. -c modelProvider=bedrock',
    });
  }
  const given = options.provider as ProviderName | undefined;
  if (options.model === undefined) return { provider: given ?? 'local' };
  const spec = parseModelSpec(options.model);
  if (spec.modelId === 'default' || spec.modelId === '') {
    throw new StepforgeError('invalid_model_option', `model "${options.model}" names no model id`, {
      hint: 'e.g. -c model=bedrock:anthropic.claude-3-5-haiku-20241022-v1:0',
    });
  }
  if (spec.prefix !== undefined && given !== undefined && spec.prefix !== given) {
    throw new StepforgeError(
      'invalid_model_option',
      `model "${options.model}" is on the ${spec.prefix} provider but modelProvider is ${given}`,
      { hint: `drop -c modelProvider, or write the model as ${given}:<model id>` },
    );
  }
  const provider = spec.prefix ?? given;
  if (provider === undefined) {
    throw new StepforgeError('invalid_model_option', `model "${options.model}" names no provider`, {
      hint: `write it as a step does, e.g. -c model=bedrock:${options.model}, or add -c modelProvider=bedrock`,
    });
  }
  return provider === 'local' ? { provider } : { provider, modelId: spec.modelId };
}

function listSteps(steps: readonly ModelStep[]): string {
  const named = steps.slice(0, LISTED).map((s) => `step "${s.step}" of workflow ${s.workflow} (${s.file})`);
  const more = steps.length > LISTED ? ` and ${steps.length - LISTED} more` : '';
  return `${steps.length === 1 ? '' : `${steps.length} model steps: `}${named.join(', ')}${more}`;
}

function where(step: ModelStep) {
  return step.location ?? { file: step.file, line: 1, column: 1 };
}
