export {
  ComposerHint as Hint,
  ComposerInput as Input,
  ComposerRoot as Root,
  ComposerSubmit as Submit,
} from "../composer.js";
