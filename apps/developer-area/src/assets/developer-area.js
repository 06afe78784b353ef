// The Developer area's one script, served from its own origin (the CSP forbids inline scripts):
// "Copy" buttons copy the text of the field they name and say so in a live region.
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy-from]") : null;
  if (button === null) return;
  const field = document.getElementById(button.getAttribute("data-copy-from") ?? "");
  const status = document.getElementById(button.getAttribute("data-copied-into") ?? "");
  if (!(field instanceof HTMLInputElement)) return;
  field.select();
  let copied = false;
  try {
    await navigator.clipboard.writeText(field.value);
    copied = true;
  } catch {
    // No clipboard access (an insecure origin, a denied permission): the text stays selected for Ctrl+C.
  }
  if (status !== null) status.textContent = copied ? "Copied to the clipboard." : "Selected: press Ctrl+C (⌘C) to copy.";
  button.textContent = copied ? "Copied" : "Copy";
});
