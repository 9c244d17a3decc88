// The agent SDK's triage graph, written in code: classify the complaint, draft advice with an
// agent, and loop through a reviewer until it approves (at most three reviews). Node functions and
// the router run in the function handler; the agents are model Tasks; the loop is bounded by
// maxIterations (25 node runs by default).
import { agent, agentNode, END, stateGraph } from 'stepforge';

export interface TriageState {
  complaint: string;
  category?: 'urgent' | 'routine';
  draft?: string;
  feedback?: string;
  reviews?: number;
  approved?: boolean;
}

const writer = agent({ name: 'writer', instructions: 'Write triage advice for the complaint, in plain words.' });
const reviewer = agent({ name: 'reviewer', instructions: 'Review the advice: is it safe, and is it clear?' });

export const triageGraph = stateGraph<TriageState>()
  .addNode('classify', (s) => ({ category: /chest|breath|bleed/i.test(s.complaint) ? 'urgent' : 'routine', reviews: 0 }))
  .addNode('draft', agentNode(writer,
    (s) => `${s.category} complaint: ${s.complaint}${s.feedback ? `\nReviewer said: ${s.feedback}` : ''}`,
    (_s, out) => ({ draft: String(out) })))
  .addNode('review', agentNode(reviewer,
    (s) => `Review this advice:\n${s.draft}`,
    // The offline reviewer cannot judge: an urgent draft is approved on its second review, a routine one on its first.
    (s, out) => ({ feedback: String(out), reviews: (s.reviews ?? 0) + 1, approved: (s.reviews ?? 0) + 1 >= (s.category === 'urgent' ? 2 : 1) })))
  .addEdge('classify', 'draft')
  .addEdge('draft', 'review')
  .addEdge('review', (s) => (s.approved ? END : (s.reviews ?? 0) >= 3 ? END : 'draft'));
