import { cx } from "./cx";
import { controlClass } from "./input";

export function Textarea({ className, ...props }: React.ComponentProps<"textarea">) {
  return <textarea className={cx(controlClass, "min-h-24 resize-y py-2 leading-relaxed", className)} {...props} />;
}
