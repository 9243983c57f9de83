# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h100-80gb-hbm3/decode/20261208T002416Z.csv'
run_id = '20261208T002416Z'
gpu = 'h100-80gb-hbm3'
gpu_name = 'NVIDIA H100 80GB HBM3'
mode = 'cold'
grid_shape = 'batch = tokens / S (per panel), heads per panel, bf16'
grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode, burst, init=normal'
kinds_note = 'burst, init=normal'
kinds_note_all = 'burst, init=normal'
figure_page = 1
figure_pages = 1
npanels = 14
array panel_file[14] = ['plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D64_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H16_KV1_D128_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H64_KV8_D128_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_b1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page16.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1_page16.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page16_b1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page128.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page128_b1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q4.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q4_page16.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q4_page128.dat']
array panel_title[14] = ['H=32 KV=8 Q=1, D=64, causal', 'H=16 KV=1 (MQA) Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1', 'H=64 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, pages of 16, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 128', 'H=32 KV=8 Q=1, D=128, causal, pages of 128, batch 1', 'H=32 KV=8 Q=4, D=128, causal', 'H=32 KV=8 Q=4, D=128, causal, pages of 16', 'H=32 KV=8 Q=4, D=128, causal, pages of 128']
nvariants = 14
array variant_name[14] = ['naive', 'inplace', 'cudnn_sdpa', 'flash_mma', 'flash_hopper', 'flash_decode', 'torch_naive', 'torch_inplace', 'torch_sdpa_math', 'torch_sdpa_efficient', 'torch_sdpa_flash', 'torch_sdpa_cudnn', 'torch_flex', 'fa4']
npeers = 7
array variant_peer[14] = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0]
array variant_dash[14] = ['solid', 'solid', 'solid', 'solid', 'solid', 'solid', '(12, 6)', '(12, 6)', '(12, 6)', '(12, 6)', '(12, 6)', '(12, 6)', '(12, 6)', 'solid']
array variant_rgb[14] = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#d55e00', '#88ccee', '#004c78', '#a87400', '#9c4400', '#2a86bd', '#a34d80', '#00674b', '#000000', '#ddcc77']
array variant_pt[14] = [7, 5, 9, 11, 13, 9, 6, 4, 12, 14, 10, 8, 6, 5]
array variant_pt_filled[14] = [7, 5, 9, 11, 13, 9, 7, 5, 13, 15, 11, 9, 7, 5]
array variant_pt_open[14] = [6, 4, 8, 10, 12, 8, 6, 4, 12, 14, 10, 8, 6, 4]
array variant_ps[14] = [1.0, 1.0, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.2, 1.2, 1.2, 1.2, 1.1, 1.0]
have_cudnn = 1
have_naive = 1
seq_min = 1024
seq_max = 131072
seq_pad = 0.4
array panel_n_ms[14] = [44, 44, 88, 11, 44, 22, 32, 8, 8, 32, 8, 88, 32, 32]
array legend_ms[14] = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
array panel_n_tflops[14] = [44, 44, 88, 11, 44, 22, 32, 8, 8, 32, 8, 88, 32, 32]
array legend_tflops[14] = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
array panel_n_mem[14] = [44, 44, 88, 11, 44, 22, 32, 8, 8, 32, 8, 88, 32, 32]
array legend_mem[14] = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
array panel_n_naive[14] = [44, 44, 88, 11, 44, 22, 32, 8, 8, 32, 8, 88, 32, 32]
array legend_naive[14] = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
array panel_n_energy[14] = [44, 44, 88, 11, 44, 22, 32, 8, 8, 32, 8, 88, 32, 32]
array legend_energy[14] = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
have_energy = 1
headline_n = 7
array headline_show[14] = [1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1]
array panel_n_headline[14] = [28, 28, 56, 7, 28, 14, 20, 5, 5, 20, 5, 56, 20, 20]
array legend_headline[14] = [1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1]
headline_ymin = -0.212185
headline_ymax = 3.37677
headline_note = 'not shown: 3 PyTorch peers, 6.1–1.2e+02× slower than cudnn_sdpa'
headline_bars = 0
array panel_bars[14] = ['', '', '', '', '', '', '', '', '', '', '', '', '', '']
headline_how = 'ratios of medians, measured row after row'
headline_level = '98 %'
label_w = 0.07
label_h = 0.05
peak_tflops = 790.5
tflops_max = 50.126
mem_unit = 'GiB'
mem_per_unit = 1024
mem_max = 53398
mem_note = 'on the zero line: cudnn_sdpa, flash_decode, fa4 and 2 PyTorch peers (at most 32 MiB at any S)'
have_torch = 1
array panel_n_torch[14] = [20, 20, 40, 5, 20, 10, 20, 5, 5, 20, 5, 40, 20, 20]
array legend_torch[14] = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]
torch_ymax = 5.83672
torch_note = 'fastest PyTorch peer: torch_flex at 35 points, torch_sdpa_flash at 10, torch_sdpa_cudnn at 5'
have_ratio = 0
baseline = ''
ratio_why = 'no baseline given'
have_decode = 1
peak_read_gbps = 3171.3
bw_gbps_max = 3147.12
bw_seq_min = 1024
bw_seq_max = 131072
bw_grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode, burst, init=normal'
array panel_n_bandwidth[14] = [44, 44, 88, 11, 44, 22, 32, 8, 8, 32, 8, 88, 32, 32]
array legend_bandwidth[14] = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
nbw_panels = 14
array bw_panel_file[14] = ['plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D64_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H16_KV1_D128_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H64_KV8_D128_causal_q1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_b1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page16.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1_page16.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page16_b1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page128.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q1_page128_b1.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q4.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q4_page16.dat', 'plots/h100-80gb-hbm3/decode/data/panel_H32_KV8_D128_causal_q4_page128.dat']
array bw_panel_title[14] = ['H=32 KV=8 Q=1, D=64, causal', 'H=16 KV=1 (MQA) Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1', 'H=64 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, pages of 16, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 128', 'H=32 KV=8 Q=1, D=128, causal, pages of 128, batch 1', 'H=32 KV=8 Q=4, D=128, causal', 'H=32 KV=8 Q=4, D=128, causal, pages of 16', 'H=32 KV=8 Q=4, D=128, causal, pages of 128']
