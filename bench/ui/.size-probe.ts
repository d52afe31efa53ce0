import { libraryBundleSize, adapterEntrySizes } from "./adapter-sizes.js";
const external = [/^react($|\/)/, /^react-dom($|\/)/, /^@conch\//, /^@radix-ui\//, /^@tanstack\//, /^cmdk/, /^react-markdown/, /^remark-/, /^unified/];
const size = await libraryBundleSize(process.cwd() + "/packages/nacre/src/index.ts", "/tmp/picker/core", (id) => !id.startsWith(".") && !id.startsWith("/") && external.some((re) => re.test(id)));
console.log("core", JSON.stringify(size));
