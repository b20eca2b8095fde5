// A triage decision sent as a VEX document through GraphQL applyVex (docs/spec/CONTRACT.md §13, §19).
import { useMutation } from "@urql/preact";
import { graphql } from "../../graphql.ts";

const ApplyTriage = graphql(`
  mutation ApplyTriage($applicationId: ID!, $document: JSON!, $expiresAt: String) {
    applyVex(applicationId: $applicationId, document: $document, expiresAt: $expiresAt) {
      applied
      unchanged
      pending
      errors {
        path
        message
      }
    }
  }
`);

export const useApplyTriage = () => useMutation(ApplyTriage);
