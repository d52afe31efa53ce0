export {
  initialLearningState,
  type LearnBeforeFoldOptions,
  type LearnBeforeFoldResult,
  type Learner,
  type LearnerOutcome,
  type LearnerReview,
  type LearningState,
  learnBeforeFold,
  type PersonWords,
  personWordsBetween,
} from "./learner.js";
export {
  createMemoryLearner,
  type LearnedMemory,
  type MemoryLearner,
  type MemoryLearnerOptions,
} from "./memory-learner.js";
