import { expect } from 'chai';
import { API_KEY_PERMISSIONS, oauthPermissions, PERMISSIONS, ROLE_PERMISSIONS, ROLES } from '../../domain/accounts/permissions';

/**
 * The contract's table "Permissions by role", copied here by hand so that a change to the
 * code's table must be a deliberate change to this one too.
 */
const CONTRACT: Record<string, { viewer: boolean; developer: boolean; admin: boolean; owner: boolean; key: boolean }> = {
  'agents.view': { viewer: true, developer: true, admin: true, owner: true, key: true },
  'calls.view': { viewer: true, developer: true, admin: true, owner: true, key: true },
  'logs.view': { viewer: true, developer: true, admin: true, owner: true, key: true },
  'members.view': { viewer: true, developer: true, admin: true, owner: true, key: true },
  'agents.edit': { viewer: false, developer: true, admin: true, owner: true, key: true },
  'calls.place': { viewer: false, developer: true, admin: true, owner: true, key: true },
  'keys.manage': { viewer: false, developer: true, admin: true, owner: true, key: true },
  'billing.view': { viewer: false, developer: false, admin: true, owner: true, key: true },
  'audit.view': { viewer: false, developer: false, admin: true, owner: true, key: false },
  'numbers.manage': { viewer: false, developer: false, admin: true, owner: true, key: false },
  'members.manage': { viewer: false, developer: false, admin: true, owner: true, key: false },
  'billing.manage': { viewer: false, developer: false, admin: false, owner: true, key: false },
  'kyc.manage': { viewer: false, developer: false, admin: false, owner: true, key: false },
  // Beyond the contract's table (docs/decisions/0208, 0210): erasure and closing the workspace.
  'calls.erase': { viewer: false, developer: false, admin: true, owner: true, key: false },
  'workspace.close': { viewer: false, developer: false, admin: false, owner: true, key: false },
};

describe('the permission table', () => {
  it('names exactly the contract permissions', () => {
    expect([...PERMISSIONS].sort()).to.deep.equal(Object.keys(CONTRACT).sort());
  });

  for (const permission of PERMISSIONS) {
    for (const role of ROLES) {
      const allowed = CONTRACT[permission][role];
      it(`${role} ${allowed ? 'has' : 'lacks'} ${permission}`, () => expect(ROLE_PERMISSIONS[role].has(permission)).to.equal(allowed));
    }
    const keyAllowed = CONTRACT[permission].key;
    it(`an API key ${keyAllowed ? 'has' : 'lacks'} ${permission}`, () => expect(API_KEY_PERMISSIONS.has(permission)).to.equal(keyAllowed));
  }

  it('a connected app has what both its user role and a key have', () => {
    for (const role of ROLES) {
      for (const permission of PERMISSIONS) {
        expect(oauthPermissions(role).has(permission), `${role} ${permission}`).to.equal(CONTRACT[permission][role] && CONTRACT[permission].key);
      }
    }
  });
});
