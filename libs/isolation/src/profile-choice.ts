import {
  ValidationError,
  defaultIsolationProfileSpec,
  parseIsolationProfile,
  parseIsolationProfileSpec,
  type IsolationProfileSpec,
} from "@tenantplane/api";

/**
 * Name recorded on the objects of the lockdown profile. Parentheses cannot occur in object
 * names, so it never collides with a real IsolationProfile.
 */
export const LOCKDOWN_PROFILE_NAME = "(lockdown)";

/**
 * What a tenant is held to while the IsolationProfile it names is missing or invalid: Pod
 * Security `restricted` in every mode, all traffic denied except the tenant API's own (port
 * 6443 in, DNS out, to and from the namespace's pods), and the built-in quota and limits.
 * A typo in a profile name must never leave a tenant less isolated than the defaults.
 */
export const lockdownIsolationProfileSpec: IsolationProfileSpec = parseIsolationProfileSpec({
  podSecurity: { enforce: "restricted", audit: "restricted", warn: "restricted" },
  network: {
    defaultDeny: { ingress: true, egress: true },
    allow: { dns: false, sameNamespace: false, namespaces: [], cidrs: [] },
  },
});

/** The profile a tenant is isolated with, and why, when it is not the one it asked for. */
export interface ProfileChoice {
  profile: IsolationProfileSpec;
  /** Recorded on the compiled objects; undefined means the built-in profile. */
  profileName?: string | undefined;
  /** Set when the named profile cannot be used and the lockdown profile stands in for it. */
  problem?: { reason: "ProfileNotFound" | "InvalidProfile"; message: string } | undefined;
}

/**
 * Picks the profile for a tenant naming `refName` (or none), given the IsolationProfile object
 * read for it (`found`, undefined when absent): the built-in profile without a name, the parsed
 * profile when it exists and is valid, the lockdown profile otherwise. Pure.
 */
export function chooseIsolationProfile(refName: string | undefined, found: unknown): ProfileChoice {
  if (refName === undefined) return { profile: defaultIsolationProfileSpec };
  const lockdown =
    "until then the host namespace is locked down (restricted Pod Security, all traffic denied except the tenant API on port 6443)";
  if (found === undefined) {
    return {
      profile: lockdownIsolationProfileSpec,
      profileName: LOCKDOWN_PROFILE_NAME,
      problem: {
        reason: "ProfileNotFound",
        message:
          `IsolationProfile ${refName} does not exist: create it, or point spec.isolationProfileRef.name at an ` +
          `existing profile; ${lockdown}`,
      },
    };
  }
  try {
    return { profile: parseIsolationProfile(found).spec, profileName: refName };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return {
      profile: lockdownIsolationProfileSpec,
      profileName: LOCKDOWN_PROFILE_NAME,
      problem: { reason: "InvalidProfile", message: `${err.message}; ${lockdown}` },
    };
  }
}
