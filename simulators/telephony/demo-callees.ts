import type { CalleeScript } from './simulated-calls';

/**
 * Callees at fixed numbers that `npm start`'s telephony simulator plays, so that a newcomer can
 * try a feature against the local simulators by placing a call to one of them (docs/api-guide.md says
 * which). Every other number answers as DEFAULT_CALLEE.
 */

/**
 * Keypad digits (`call.keypad`, docs/decisions/0156-0157):
 * - PHONE_MENU: a two-level phone menu that listens for DTMF tones (the agent's `press_digits`);
 *   an agent whose system prompt asks for support, then billing, gets to the billing desk with
 *   2 then 3 (the simulated model's keypad rule).
 * - PRESSES_ONE: waits for the agent to speak, presses 1 (a `dtmf` event on the stream), then
 *   says "Goodbye." once the agent has answered (an agent with `caller_digits` hears "[pressed 1]").
 */
export const KEYPAD_DEMO_NUMBERS = { PHONE_MENU: '+919700000101', PRESSES_ONE: '+919700000102' } as const;

const sorry = [{ say: 'Sorry, we did not get your choice. Goodbye.', unprompted: true as const }, { hangUp: true as const }];

export const KEYPAD_DEMO_CALLEES: Record<string, CalleeScript> = {
  [KEYPAD_DEMO_NUMBERS.PHONE_MENU]: {
    kind: 'answer',
    answerAfterSeconds: 1,
    conversation: [
      // Time for the agent's side to start listening before the menu speaks.
      { pauseMs: 1_500 },
      {
        menu: {
          say: 'Welcome to Acme. Press 1 for sales, press 2 for support.',
          otherwise: sorry,
          options: {
            '1': [
              { say: 'Sales here. Goodbye.', unprompted: true },
              { hangUp: true, afterAgentSilenceMs: 1_000 },
            ],
            '2': [
              {
                menu: {
                  say: 'Press 3 for billing, press 4 for technical help.',
                  otherwise: sorry,
                  options: {
                    '3': [
                      { say: 'Billing desk here. Your balance is 420 rupees.', unprompted: true },
                      { hangUp: true, afterAgentSilenceMs: 1_000 },
                    ],
                    '4': [
                      { say: 'Technical help here. Goodbye.', unprompted: true },
                      { hangUp: true, afterAgentSilenceMs: 1_000 },
                    ],
                  },
                },
              },
            ],
          },
        },
      },
    ],
  },
  [KEYPAD_DEMO_NUMBERS.PRESSES_ONE]: {
    kind: 'answer',
    answerAfterSeconds: 1,
    conversation: [{ press: '1' }, { say: 'Goodbye.', afterAgentSilenceMs: 400 }],
  },
};

/**
 * Voicemail (`call.voicemail`, docs/decisions/0158-0159):
 * - MACHINE: an answering machine that the simulated provider's detection recognises (`Machine=true`
 *   about 1.5 s after the answer): greeting, beep, then it records for up to 60 s (the simulator's
 *   `heard` of the call after its `beepedAt` is the message left).
 * - MACHINE_UNDETECTED: the same machine, but the provider's detection says nothing: only the
 *   transcript backstop ("leave a message after the beep") finds it.
 * Any other number answers as a person (`Machine=false` when detection was asked for).
 */
export const VOICEMAIL_DEMO_NUMBERS = { MACHINE: '+919700000201', MACHINE_UNDETECTED: '+919700000202' } as const;

const GREETING = 'Hi, you have reached Ravi. Please leave a message after the beep.';

export const VOICEMAIL_DEMO_CALLEES: Record<string, CalleeScript> = {
  [VOICEMAIL_DEMO_NUMBERS.MACHINE]: { kind: 'machine', answerAfterSeconds: 2, greeting: GREETING, hangUpAfterSeconds: 60 },
  [VOICEMAIL_DEMO_NUMBERS.MACHINE_UNDETECTED]: { kind: 'machine', answerAfterSeconds: 2, greeting: GREETING, hangUpAfterSeconds: 60, detection: 'none' },
};

/**
 * Transfer to a person (`call.transfer`, docs/decisions/0160-0161):
 * - ANGRY_CALLER: call it with an agent that has destinations: after the agent's welcome it says
 *   "This is ridiculous, I want to talk to a person about my bill." (the simulated model's rule
 *   transfers it), then stays on the line, silent, for up to 3 minutes.
 * - DESK: a person at the destination: answers after 2 s and stays 60 s; on a warm transfer it
 *   hears the agent's briefing on its own stream (its `heard`), then says "Thanks, I will take it
 *   from here." before it is joined with the caller.
 * - DESK_NO_ANSWER: rings for 5 minutes (a transfer there fails `no-answer` at `ring_timeout_seconds`).
 * - DESK_BUSY: busy.
 */
export const TRANSFER_DEMO_NUMBERS = {
  ANGRY_CALLER: '+919700000301',
  DESK: '+919700000302',
  DESK_NO_ANSWER: '+919700000303',
  DESK_BUSY: '+919700000304',
} as const;

export const TRANSFER_DEMO_CALLEES: Record<string, CalleeScript> = {
  [TRANSFER_DEMO_NUMBERS.ANGRY_CALLER]: {
    kind: 'answer',
    answerAfterSeconds: 1,
    hangUpAfterSeconds: 180,
    conversation: [{ say: 'This is ridiculous, I want to talk to a person about my bill.' }],
  },
  [TRANSFER_DEMO_NUMBERS.DESK]: { kind: 'answer', answerAfterSeconds: 2, hangUpAfterSeconds: 60, conversation: [{ say: 'Thanks, I will take it from here.' }] },
  [TRANSFER_DEMO_NUMBERS.DESK_NO_ANSWER]: { kind: 'no-answer', ringSeconds: 300 },
  [TRANSFER_DEMO_NUMBERS.DESK_BUSY]: { kind: 'busy' },
};
