import type { JsonClient } from "./json-client.js";

interface AccessReview {
  status?: { allowed?: boolean };
}

/**
 * Whether the client's own identity may list and watch `resource` of `apiVersion` in every
 * namespace at once, as the API server's authorizer answers two SelfSubjectAccessReviews (which
 * every authenticated user may ask). Throws when the server cannot be asked.
 */
export async function mayWatchEverywhere(client: JsonClient, apiVersion: string, resource: string): Promise<boolean> {
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const answers = await Promise.all(
    ["list", "watch"].map((verb) =>
      client.request<AccessReview>("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: { resourceAttributes: { verb, group, resource } },
        },
      }),
    ),
  );
  return answers.every((a) => a.status?.allowed === true);
}
