import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { NewWebhookForm } from "@/components/webhooks/new-webhook-form";
import { WebhookList } from "@/components/webhooks/webhook-list";

export const metadata: Metadata = { title: "Webhooks" };

export default function WebhooksPage() {
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Dispatch calls your endpoint when a job or a reel reaches an outcome or an account needs reconnecting, signed as Standard Webhooks says, and retries for 24 hours until it answers 2xx."
      />
      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
        <Card>
          <CardHeader title="New webhook" />
          <CardBody>
            <NewWebhookForm />
          </CardBody>
        </Card>
        <WebhookList />
      </div>
    </>
  );
}
