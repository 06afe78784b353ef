// The API reference page's script, served from our own origin (the CSP forbids inline scripts):
// Redoc renders the OpenAPI document into #api-reference.
const container = document.getElementById("api-reference");
if (container !== null && typeof Redoc !== "undefined") {
  const font = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  Redoc.init(container.dataset.specUrl, {
    hideDownloadButton: true,
    expandResponses: "200,201",
    jsonSampleExpandLevel: 2,
    theme: {
      colors: { primary: { main: "#0f766e" } },
      typography: {
        fontFamily: font,
        headings: { fontFamily: font, fontWeight: "650" },
        code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
      },
      sidebar: { backgroundColor: "#f6f7f9", width: "240px" },
      rightPanel: { backgroundColor: "#1b2230" },
    },
  }, container, (error) => {
    container.dataset.state = error ? "failed" : "rendered";
  });
}
