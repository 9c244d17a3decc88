// `npx cdk synth|deploy` entry point (cdk.json runs it with tsx from the repository root).
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';
import { buildApp } from '../lib/buildApp.js';
import { findProjectRoot } from '../lib/findProjectRoot.js';

const { app } = buildApp({ projectRoot: findProjectRoot(dirname(fileURLToPath(import.meta.url))) });
app.synth();
