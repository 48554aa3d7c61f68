// A gate a tool waits on until the test opens it; `entered` resolves once a call waits there (the tool calls
// `enter`). Tests hold a call open on it instead of on a timer.
export function gate() {
  let open!: () => void;
  let enter!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  const entered = new Promise<void>((resolve) => (enter = resolve));
  return { wait, open, entered, enter };
}
export type Gate = ReturnType<typeof gate>;
