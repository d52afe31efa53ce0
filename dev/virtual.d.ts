declare module "virtual:demo-transcript" {
  const transcript: import("./transcript-plugin.js").DemoTranscript | null;
  export default transcript;
}

declare module "*.module.css" {
  const classes: Readonly<Record<string, string>>;
  export default classes;
}
declare module "*.css";
