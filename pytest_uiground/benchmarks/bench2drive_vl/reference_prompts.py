# ruff: noqa: E501  (the reference's prompts are kept line for line)
"""The reference's judge prompts, verbatim (this module is data: about 230 lines of text).

Source: Thinklab-SJTU/Bench2Drive-VL @5896a851ed9308d56f8f9db8a3160993679ee008,
``B2DVL_Adapter/prompt_utils.py`` with its f-strings expanded, and the per-question
sentences of ``B2DVL_Adapter/evaluator.py`` (``speed_limit_eval``, ``brake_eval``,
``ego_change_lane_dir``, ``other_vehicle_change_lane_dir``). Typos and trailing spaces are
the reference's: the published tables were judged with exactly these strings, so any
change makes the numbers incomparable. ``tests/benchmarks/test_b2d_judge.py`` checks each string's
sha256 against the values recorded in the parity notes.
"""

from __future__ import annotations

COLOR_PROMPT = (
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
)

SYSTEM_PROMPT = (
    "\n"
    "You're evaluating answers about autonomous driving given by other visual-language models. \n"
    "The question, its ground truth and anwser to be reviewed will be given below.\n"
    "Rate the answer whith a score in 0-100, and give reasons. use JSON output.\n"
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
    "\n"
)

NORMAL_EXAMPLE = (
    "\n"
    "EXAMPLE INPUT 1\n"
    "question: \"What is the rough moving status of the black cat to the front?\"\n"
    "gt: \"It is steering to its right, driving slowly.\"\n"
    "anwser from VLM: \"It is turning right, driving slowly.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"reason\": \"This answer is perfectly accurate\",\n"
    "    \"score\": 100\n"
    "}\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "question: \"What is the rough moving status of the black cat to the front?\"\n"
    "gt: \"It is steering to its right, driving slowly.\"\n"
    "anwser from VLM: \"It is going straight, driving at normal speed.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "{\n"
    "    \"reason\": \"Both direction and speed are not correct.\",\n"
    "    \"score\": 0\n"
    "}\n"
)

LISTED_PROMPT = (
    "\n"
    "You're evaluating answers about autonomous driving given by other visual-language models. \n"
    "The question, its ground truth and anwser to be reviewed will be given below.\n"
    "Notice that the question and answer may involve multiple objects,\n"
    "but we only focus on one object which will be specified. DO NOT CARE ABOUT OTHER OBJECTS.\n"
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
    "\n"
    "Rate the answer whith a score in 0-100, and give reasons. use JSON output. DO NOT CARE ABOUT OTHER OBJECTS.\n"
)

LISTED_EXAMPLE = (
    "\n"
    "EXAMPLE INPUT 1\n"
    "question: \"The list of important vehicles in current scene is 'the navy car that is to the front left of the ego vehicle(c49442, CAM_FRONT, CAM_FRONT_LEFT), the black SUV that is to the rear left of the ego vehicle(c49443, CAM_BACK), the white car that is to the front left of the ego vehicle(c49448, CAM_FRONT_LEFT.' List deep colored vehicles among them.\"\n"
    "gt: \"the navy car that is to the front left of the ego vehicle(c49442, CAM_FRONT, CAM_FRONT_LEFT), the black SUV that is to the rear left of the ego vehicle(c49443, CAM_BACK).\"\n"
    "anwser from VLM: \"the black SUV that is to the rear left of the ego vehicle(c49443, CAM_BACK), the white car that is to the front left of the ego vehicle(c49448, CAM_FRONT_LEFT.\"\n"
    "focus: \"the navy car that is to the front left of the ego vehicle <c49442, <CAM_FRONT,...,...>, <CAM_FRONT_LEFT,...,...>>\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"reason\": \"According to gt, the navy car is deep colored, but VLM didn't include it.\",\n"
    "    \"score\": 0\n"
    "}\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "question: \"What are the rough moving speed and moving direction of the important vehicles?\"\n"
    "gt: \"The navy car that is to the front left of the ego vehicle(<c49442<CAM_FRONT,378.2,581.1><CAM_FRONT_LEFT,1767.2,615.2>>) is driving at a normal speed in the same direction of the ego vehicle, going straight. The olive car that is to the front left of the ego vehicle(<c49441<CAM_FRONT,651.9,482.4>>) is driving at a normal speed in the same direction of the ego vehicle, going straight. The maroon car that is to the front left of the ego vehicle(<c49448<CAM_FRONT,558.0,469.8>>) is driving at a normal speed in the opposite direction of the ego vehicle, going straight.\"\n"
    "anwser from VLM: \"A(frame 30): \"The orange car is moving forward at a moderate speed, likely maintaining its lane position. The blue car is also moving forward, slightly behind the orange car, indicating it might be following the same lane. The blue car appears to be moving at a similar speed to the orange car.\"\n"
    "\n"
    "For the ego vehicle:\n"
    "- Moving forward at a moderate speed, likely maintaining its lane position.\n"
    "- Following the orange car, which is moving forward at a moderate speed.\n"
    "\n"
    "The other vehicles (yellow sign, garages, trees, buildings, streetlights, and sidewalk) do not have specific speeds or directions mentioned in the description.\"\n"
    "focus: \"The olive car that is to the front left of the ego vehicle(<c49441<CAM_FRONT,651.9,482.4>>)\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "{\n"
    "    \"reason\": \"According to gt, the olive car, which the vlm recognized as the orange car, is driving at a normal speed in the same direction of the ego vehicle, going straight, which fits the vlm's description, it's moving forward at a moderate speed, likely maintaining its lane position.\",\n"
    "    \"score\": 100\n"
    "}\n"
    "\n"
    "EXAMPLE INPUT 3\n"
    "question: \"Basic infos of the actors: [..] What are the rough moving speed and moving direction of the important vehicles?\"\n"
    "gt: \"The black car that is to the front of the ego vehicle(<c14785<CAM_FRONT,799.8,531.8>>) is driving slowly in the same direction of the ego vehicle, going straight.\"\n"
    "answer from VLM: \"Based on the information provided, here are the rough moving speeds and directions for the important vehicles:\n"
    "\n"
    "1. **Ego Vehicle (Maroon SUV)**:\n"
    "   - Speed: 1.0 m/s\n"
    "   - Direction: Same direction as the ego vehicle\n"
    "\n"
    "2. **Black Car**:\n"
    "   - Speed: 2.1 m/s\n"
    "   - Direction: Same direction as the ego vehicle\n"
    "\n"
    "3. **Maroon SUV**:\n"
    "   - Speed: 1.0 m/s\n"
    "   - Direction: Same direction as the ego vehicle\n"
    "\n"
    "The ego vehicle is moving at a speed of 0.8 m/s, while the black car is moving at a speed of 2.1 m/s. Both the maroon SUV and the black car are moving in the same direction as the ego vehicle.\"\n"
    "focus: \"The black car that is to the front of the ego vehicle\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 3\n"
    "{\n"
    "    \"reason\": \"The VLM correctly identified the direction of the black car as the same as the ego vehicle, which matches the gt. However, the VLM provided a specific speed (2.1 m/s) for the black car, whereas the gt only mentions it is driving slowly without specifying the speed.\",\n"
    "    \"score\": 90\n"
    "}\n"
    "\n"
    "again, DO NOT CARE ABOUT NON-FOCUS OBJECTS.\n"
)

FUTURE_PROMPT = (
    "\n"
    "In this task, I will provide answers for some future frames related to this question. If the VLM's answer for the current frame is incorrect but it correctly predicts the answers for future frames, a small portion of the score (e.g., 5-10 points) can be deducted at your discretion. Further in the future, more the score deducted. \n"
)

IMPORTANT_OBJECT_PROMPT1 = (
    "\n"
    "In this sentence, please identify each vehicle and object, convert it into a list and clear their ids (content within parentheses), use JSON output.\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "The black car that is to the front of the ego vehicle(<c1741<CAM_FRONT,1099.8,642.8><CAM_FRONT_RIGHT,-493.6,729.8>>), the junction, the gray car that is to the front right of the ego vehicle(<c1740<CAM_FRONT_RIGHT,397.4,496.8><CAM_FRONT,1677.0,505.8>>), the black car that is to the front right of the ego vehicle(<c1748<CAM_FRONT,1367.2,491.6><CAM_FRONT_RIGHT,134.6,494.1>>), the black car that is to the front right of the ego vehicle(<c1749<CAM_FRONT,1500.2,486.1><CAM_FRONT_RIGHT,274.8,484.2>>).\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"list\": [\"The black car that is to the front of the ego vehicle\", \"the junction\", \"the gray car that is to the front right of the ego vehicle\", \"the black car that is to the front right of the ego vehicle 1\", \"the black car that is to the front right of the ego vehicle 2\"]\n"
    "}\n"
)

IMPORTANT_OBJECT_PROMPT2 = (
    "\n"
    "Next, you will be provided with a list and a sentence. Your task is to identify the objects from the list.\n"
    "If it is likely an item included in the list, use description from the list, otherwise use original description. \n"
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
    "\n"
    "Return the result as a list in JSON format.\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "{\n"
    "    \"list\": [\"The black car that is to the front of the ego vehicle\", \"the junction\", \"the gray car that is to the front right of the ego vehicle\", \"the black car that is to the front right of the ego vehicle 1\", \"the black car that is to the front right of the ego vehicle 2\"]\n"
    "    \"sentence\": \"In this context, the important objects in the scene are:\n"
    "\n"
    "1. The road itself, which is the primary path for the ego vehicle to follow, and the junction ahead.\n"
    "2. The car in front of the ego vehicle, which is the immediate object of interest for the vehicle's autonomous driving system.\n"
    "3. The streetlights on the side of the road, which provide illumination for the vehicle's sensors and help guide the vehicle.\"\n"
    "}\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"list\": [\"the road\", \"the junction\", \"The black car that is to the front of the ego vehicle\", \"the streetlights\"]\n"
    "}\n"
)

KEY_43_GT_PROMPT = (
    "\n"
    "Your task is to extract a speed key and a direction key from below.\n"
    "direction_keys = {'CHANGE_LANE_LEFT', 'CHANGE_LANE_RIGHT', 'GO_STRAIGHT', 'TURN_LEFT', 'TURN_RIGHT', 'DEVIATE_LEFT', 'DEVIATE_RIGHT'}\n"
    "'GO_STRAIGHT' is used in both following lane scenarios and going straight in junction scenarios.\n"
    "'DEVIATE_LEFT' and 'DEVIATE_RIGHT' are used when the ego vehicle wants to occupy a position slightly to the left/right within the current lane.\n"
    "speed_keys = {'KEEP', 'ACCELERATE', 'DECELERATE', 'STOP'}\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "\"The ego vehicle should align to the target lane beacuse the ego vehicle is still changing lane to circumvent the obstacle. The ego vehicle doesn't need to brake because it is changing to the left lane now.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "['CHANGE_LANE_LEFT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "\"A: Okay, The ego vehicle needs to initiate a lane change to the *right*. Here's a prioritized breakdown of the steps:\n"
    "\n"
    "1.  **Accelerate:** The ego vehicle *must* begin to accelerate. It's currently at 0.0 m/s and needs a positive velocity to execute the lane change and follow the road's curve. A moderate acceleration is appropriate, not excessively fast, but enough to gain momentum. 2.  **Signal Intent:** Simultaneously with initiating acceleration, the ego vehicle should activate its right turn signal to indicate its intention to change lanes. This provides a warning to other vehicles.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "['CHANGE_LANE_RIGHT', 'ACCELERATE']\n"
    "\n"
    "EXAMPLE INPUT 3\n"
    "\"The ego vehicle should continue turning right at the current intersection.\"\n"
    "\n"
    "EXAMPLE OUTPUT 3\n"
    "['TURN_RIGHT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 4\n"
    "\"The ego vehicle should deviate slightly to the right from its current lane to avoid the invading vehicles.\"\n"
    "\n"
    "EXAMPLE OUTPUT 4\n"
    "['DEVIATE_RIGHT', 'KEEP']\n"
)

KEY_43_A_PROMPT = (
    "\n"
    "Your task is to extract a speed key and a direction key from below.\n"
    "direction_keys = {'CHANGE_LANE_LEFT', 'CHANGE_LANE_RIGHT', 'CHANGE_LANE', 'GO_STRAIGHT', 'TURN_LEFT', 'TURN_RIGHT', 'DEVIATE_LEFT', 'DEVIATE_RIGHT'}\n"
    "'GO_STRAIGHT' is used in both following lane scenarios and going straight in junction scenarios.\n"
    "'DEVIATE_LEFT' and 'DEVIATE_RIGHT' are used when the ego vehicle wants to occupy a position slightly to the left/right within the current lane.\n"
    "'CHANGE_LANE' is used when the answer mentioned lane changing but didn't specify the answer.\n"
    "speed_keys = {'KEEP', 'ACCELERATE', 'DECELERATE', 'STOP'}\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "\"The ego vehicle should align to the target lane beacuse the ego vehicle is still changing lane to circumvent the obstacle. The ego vehicle doesn't need to brake because it is changing to the left lane now.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "['CHANGE_LANE_LEFT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "\"A: Okay, The ego vehicle needs to initiate a lane change to the *right*. Here's a prioritized breakdown of the steps:\n"
    "\n"
    "1.  **Accelerate:** The ego vehicle *must* begin to accelerate. It's currently at 0.0 m/s and needs a positive velocity to execute the lane change and follow the road's curve. A moderate acceleration is appropriate, not excessively fast, but enough to gain momentum. 2.  **Signal Intent:** Simultaneously with initiating acceleration, the ego vehicle should activate its right turn signal to indicate its intention to change lanes. This provides a warning to other vehicles.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "['CHANGE_LANE_RIGHT', 'ACCELERATE']\n"
    "\n"
    "EXAMPLE INPUT 3\n"
    "\"The ego vehicle should continue turning right at the current intersection.\"\n"
    "\n"
    "EXAMPLE OUTPUT 3\n"
    "['TURN_RIGHT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 4\n"
    "\"The ego vehicle should change lanes or deviate from the lane to maintain safety and avoid potential collisions with the faster-moving police cars and trucks.\"\n"
    "\n"
    "EXAMPLE OUTPUT 4\n"
    "['CHANGE_LANE', 'KEEP']\n"
)

#: evaluator.py: speed_limit_eval (Q7), after SYSTEM_PROMPT (no example).
SPEED_LIMIT_NOTE = (
    "Moreover, in this question, answering a higher speed limit than gt is a more serious mistake than "
    "answering a lower one, because it is more dangerous.")
#: evaluator.py: ego_change_lane_dir (qid 31).
EGO_LANES_NOTE = (
    "Moreover, in this task, predicting more lanes than the ground truth is a more severe error compared "
    "to predicting fewer lanes, as overprediction can lead to dangerous situations.")
#: evaluator.py: other_vehicle_change_lane_dir (qid 30).
OTHER_LANES_NOTE = (
    "Moreover, in this task, predicting fewer lanes than the ground truth is a more severe error compared "
    "to predicting more lanes, as underprediction can lead to dangerous situations.")


def braking_note(ego_speed: float) -> str:
    """evaluator.py: brake_eval (Q8), only when the ego speed is below 0.5 m/s."""
    return (f"Moreover, given the ego vehicle's low speed ({ego_speed:.2f} m/s), "
            "it is reasonable for the VLM to omit braking, even if the ground truth indicates deceleration or stopping.")
