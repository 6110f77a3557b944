import { describe, expect, it } from "vitest";
import { findKubeconfig, noKubeconfigMessage, SERVICE_ACCOUNT_TOKEN } from "./kubeconfig-sources.js";

const lookup = (env: Record<string, string>, files: string[], flag?: string) => ({
  flag,
  env,
  home: "/home/os-user",
  exists: (path: string) => files.includes(path),
});

describe("findKubeconfig", () => {
  it("takes --kubeconfig as given, then KUBECONFIG's existing files, then ~/.kube/config, then in-cluster", () => {
    expect(findKubeconfig(lookup({ KUBECONFIG: "/a" }, ["/a"], "/flag"))).toEqual({
      type: "files",
      paths: ["/flag"],
      via: "--kubeconfig",
    });
    expect(findKubeconfig(lookup({ KUBECONFIG: "/gone:/a::/b", HOME: "/h" }, ["/a", "/b", "/h/.kube/config"]))).toEqual(
      { type: "files", paths: ["/a", "/b"], via: "KUBECONFIG" },
    );
    expect(findKubeconfig(lookup({ KUBECONFIG: "/gone", HOME: "/h" }, ["/h/.kube/config"]))).toEqual({
      type: "files",
      paths: ["/h/.kube/config"],
      via: "~/.kube/config",
    });
    // Without HOME in the environment, the account's home directory.
    expect(findKubeconfig(lookup({}, ["/home/os-user/.kube/config"]))).toMatchObject({ via: "~/.kube/config" });
    expect(findKubeconfig(lookup({ KUBERNETES_SERVICE_HOST: "10.0.0.1" }, [SERVICE_ACCOUNT_TOKEN]))).toEqual({
      type: "in-cluster",
    });
  });

  it("lists every source it tried when none exists", () => {
    expect(findKubeconfig(lookup({ HOME: "/empty" }, []))).toEqual({
      tried: [
        "--kubeconfig (not given)",
        "KUBECONFIG (unset)",
        "~/.kube/config (/empty/.kube/config: no such file)",
        "the in-cluster service account (KUBERNETES_SERVICE_HOST unset: not running in a Pod)",
      ],
    });
    const found = findKubeconfig(lookup({ HOME: "/empty", KUBECONFIG: "/x:/y", KUBERNETES_SERVICE_HOST: "h" }, []));
    expect(found).toMatchObject({
      tried: [
        "--kubeconfig (not given)",
        "KUBECONFIG=/x:/y (none of these files exists)",
        expect.any(String),
        `the in-cluster service account (${SERVICE_ACCOUNT_TOKEN}: no such file)`,
      ],
    });
  });

  it("points at --offline in the message", () => {
    const message = noKubeconfigMessage(["KUBECONFIG (unset)"]);
    expect(message).toContain("no host cluster configured. Tried:\n  - KUBECONFIG (unset)\n");
    expect(message).toContain("tenantplane explain-sync --offline");
  });
});
