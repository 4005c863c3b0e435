// Preloaded with NODE_OPTIONS="--import …" when BENCH_PROFILE is set (node refuses --cpu-prof there):
// profiles the whole process with the inspector and writes <dir>/<name>-<pid>.cpuprofile when it exits.
import fs from "node:fs";
import inspector from "node:inspector";
import path from "node:path";

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 200 });
  session.post("Profiler.start");
  process.once("exit", () => {
    // Posts on an in-process session answer synchronously, so this works inside "exit".
    session.post("Profiler.stop", (error, result) => {
      if (error) return;
      fs.mkdirSync(dir, { recursive: true });
      const name = path.basename(process.argv[1] ?? "node").replace(/\W+/g, "-");
      fs.writeFileSync(path.join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
