import { brandedError } from "../brand";

/** A file the probe cannot read as MP4/MOV; its message says why in words for the uploader. */
export class VideoProbeError extends brandedError("dispatch.video-probe-error") {
  constructor(message: string) {
    super(message);
    this.name = "VideoProbeError";
  }
}
