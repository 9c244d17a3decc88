import { api, ApiFailure, clearToken, redeemCode, setToken, token } from './api.js';
import { h } from './dom.js';
import { runPage } from './runPage.js';
import { runsList } from './runsList.js';

const main = document.getElementById('main')!;
const live = document.getElementById('live')!;
let stop: (() => void) | undefined;

const setLive = (on: boolean) => {
  live.textContent = on ? '● live' : '○ reconnecting';
  live.className = `live ${on ? 'on' : 'off'}`;
};

/** The route in the fragment: `#/` the runs, `#/runs/ID` a run; `?code=` a one-time sign-in code. */
async function route(): Promise<void> {
  stop?.();
  stop = undefined;
  const [path, query] = location.hash.replace(/^#/, '').split('?');
  const code = new URLSearchParams(query ?? '').get('code');
  if (code) {
    try {
      await redeemCode(code);
    } catch (e) {
      signIn(e instanceof ApiFailure ? e.message : String(e));
      return;
    }
    // The code is spent: keep it out of the address bar and the history.
    history.replaceState(null, '', `#${path}`);
  }
  if (!token()) return signIn();
  try {
    await api('GET', '/approvals');
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401) {
      clearToken();
      return signIn("That token is not this serve's.");
    }
  }
  const m = /^\/runs\/([^/]+)$/.exec(path ?? '');
  stop = m ? runPage(main, decodeURIComponent(m[1]!), setLive) : runsList(main, setLive);
}

function signIn(problem?: string): void {
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true });
  main.replaceChildren(
    h(
      'form',
      {
        class: 'panel signin',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          setToken(input.value.trim());
          void route();
        },
      },
      h('h1', {}, 'Sign in'),
      problem ? h('p', { class: 'error', role: 'alert' }, problem) : null,
      h('p', {}, 'Open a run with ', h('code', {}, 'stepforge runs show ID --open'), ', or paste apiToken from .stepforge/stack.json.'),
      h('label', { for: 'token' }, 'API token'),
      input,
      h('button', { type: 'submit' }, 'Sign in'),
    ),
  );
  input.focus();
}

window.addEventListener('hashchange', () => void route());
void route();
