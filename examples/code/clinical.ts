// The agent SDK's clinical pipeline, written in code: an intake summary, an urgent-care check that
// runs only when the summary calls for it, three specialists at once, and the care plan. Each
// agent is a model Task; `when` and `transform` run in the function handler; the specialists
// are a Parallel state whose branches fail alone.
import { agent, parallel, workflow } from 'stepforge';

const intake = agent({ name: 'intake', instructions: 'Summarise the patient note: symptoms, history, current medications.' });
const urgentCare = agent({ name: 'urgent care', instructions: 'Say what must happen in the next hour.' });
const cardiology = agent({ name: 'cardiology', instructions: 'Assess the cardiac risk from the summary.' });
const pharmacy = agent({ name: 'pharmacy', instructions: 'Check the medications for interactions.' });
const labs = agent({ name: 'labs', instructions: 'List the lab tests to order.' });
const carePlan = agent({ name: 'care plan', instructions: 'Write the care plan from the specialists\' notes.' });

/** The summary mentions chest pain: someone must look at it now. */
export const isUrgent = (summary: unknown): boolean => /chest pain|short of breath/i.test(String(summary));

export const clinicalPipeline = workflow([
  intake,
  { agent: urgentCare, when: isUrgent, retries: 1, retryDelay: 500 },
  parallel([cardiology, pharmacy, { agent: labs, transform: (summary) => `Order labs for: ${String(summary)}` }]),
  { agent: carePlan, transform: (notes) => `Specialist notes:\n${String(notes)}`, retries: 2 },
]);
