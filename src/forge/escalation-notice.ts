/**
 * The first line of Conveyor's notice on an escalated issue (its reminders begin otherwise): replies to the
 * escalation are the comments after the latest such notice, by the forge's own times.
 */
export const ESCALATION_HEADLINE = "**Conveyor needs a human.**";
export const ESCALATION_REMINDER = "**Conveyor still needs a human.**";
