import type { Metadata } from "next";
import { ApiReference } from "@/components/api-reference/api-reference";
import { PageHeader } from "@/components/page-header";

export const metadata: Metadata = { title: "API reference" };

const DOCUMENT_URL = "/v1/openapi.json";

export default function ApiReferencePage() {
  return (
    <>
      <PageHeader
        title="API reference"
        description={`Every endpoint with its request and response schemas, read from ${DOCUMENT_URL}.`}
      />
      <ApiReference documentUrl={DOCUMENT_URL} scriptUrl="/reference/scalar.js" />
    </>
  );
}
