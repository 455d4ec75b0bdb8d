// Every model, so that connecting builds every index whichever process connects.
export * from './agent';
export * from './agent-version';
export * from './api-key';
export * from './audit-event';
export * from './invite';
export * from './knowledge-base';
export * from './kyc';
export * from './ledger-item';
export * from './membership';
export * from './oauth-token';
export * from './phone-number';
export * from './probe';
export * from './session';
export * from './sign-in-attempt';
export * from './user';
export * from './workspace';
