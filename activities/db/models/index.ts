// Every model, so that connecting builds every index whichever process connects.
export * from './api-key';
export * from './audit-event';
export * from './invite';
export * from './kyc';
export * from './ledger-item';
export * from './membership';
export * from './oauth-token';
export * from './probe';
export * from './session';
export * from './sign-in-failure';
export * from './user';
export * from './workspace';
